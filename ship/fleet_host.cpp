// fleet_host.cpp - the default --host (fleet_host.h).
#include "ship/fleet_host.h"

#include <fstream>

namespace lcpi::ship {

std::string DefaultFleetHost(const std::string& hostname, const std::string& machine_id_path) {
  std::ifstream in(machine_id_path);
  std::string id;
  if (!std::getline(in, id) || id.size() != 32) return hostname;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return hostname;
  }
  return hostname + "/" + id;
}

}  // namespace lcpi::ship
