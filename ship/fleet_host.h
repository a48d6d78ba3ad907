// fleet_host.h - the name a host ships its windows under by default.
#ifndef LCPI_SHIP_FLEET_HOST_H
#define LCPI_SHIP_FLEET_HOST_H

#include <string>

namespace lcpi::ship {

// "HOSTNAME/MACHINE-ID" (32 hex digits from `machine_id_path`, normally
// /etc/machine-id): hosts cloned from one image share a name (ubuntu,
// localhost), and with the name alone one would find the other's windows
// "in ClickHouse already" and skip its own. The host name alone when the
// file is missing or holds no machine id.
std::string DefaultFleetHost(const std::string& hostname,
                             const std::string& machine_id_path = "/etc/machine-id");

}  // namespace lcpi::ship

#endif  // LCPI_SHIP_FLEET_HOST_H
