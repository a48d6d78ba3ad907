// kernel_symbols.cpp - parsing /proc/kallsyms and /proc/modules, and
// resolving kernel addresses. Lines that do not parse are skipped rather than
// failing the load: kallsyms formats vary a little between kernels, and one
// odd line must not cost every kernel sample its symbol.
#include "libprofile/image/kernel_symbols.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "libprofile/base/text.h"

namespace lcpi {
namespace {

constexpr uint64_t kPage = 4096;

// Splits on spaces and tabs.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

uint64_t RoundUpPage(uint64_t v) {
  return v > UINT64_MAX - kPage ? UINT64_MAX : (v + kPage - 1) & ~(kPage - 1);
}

struct Parsed {
  KernelSymbol sym;
  uint32_t module = 0;  // index into the modules seen; 0 is the kernel
  uint32_t rank = 0;    // strong (t/T) before weak (w/W) at the same address
};

const KernelSymbol* Nearest(const std::vector<KernelSymbol>& syms, uint64_t addr) {
  auto it = std::upper_bound(syms.begin(), syms.end(), addr,
                             [](uint64_t a, const KernelSymbol& s) { return a < s.addr; });
  if (it == syms.begin()) return nullptr;
  return &*std::prev(it);
}

}  // namespace

Expected<KernelSymbols> KernelSymbols::Load(const std::string& kallsyms_path,
                                            const std::string& modules_path) {
  std::ifstream kallsyms(kallsyms_path);
  if (!kallsyms) return ErrnoError(kallsyms_path, errno);

  KernelSymbols ks;
  std::vector<Parsed> parsed;
  // module name ("" = kernel) -> its index in Parsed::module
  std::map<std::string, uint32_t, std::less<>> module_index = {{"", 0}};
  bool have_text = false;
  bool have_stext = false;
  uint64_t text = 0;
  uint64_t stext = 0;
  size_t lines = 0;
  size_t nonzero = 0;
  std::string line;
  while (std::getline(kallsyms, line)) {
    std::vector<std::string_view> f = Fields(line);
    if (f.size() < 3 || f[1].size() != 1) continue;
    std::optional<uint64_t> address = ParseHex(f[0]);
    if (!address) continue;
    uint64_t addr = *address;
    ++lines;
    if (addr != 0) ++nonzero;
    char type = f[1][0];
    if (f[2] == "_text") have_text = true, text = addr;
    if (f[2] == "_stext") have_stext = true, stext = addr;
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    if (f[2].size() > UINT32_MAX || ks.names_.size() > UINT32_MAX - f[2].size()) continue;
    Parsed p;
    p.sym.addr = addr;
    p.sym.name_offset = static_cast<uint32_t>(ks.names_.size());
    p.sym.name_size = static_cast<uint32_t>(f[2].size());
    ks.names_ += f[2];
    if (f.size() >= 4 && f[3].size() > 2 && f[3].front() == '[' && f[3].back() == ']') {
      std::string_view module = f[3].substr(1, f[3].size() - 2);
      auto it = module_index.find(module);
      if (it == module_index.end())
        it = module_index.emplace(std::string(module), module_index.size()).first;
      p.module = it->second;
    }
    p.rank = (type == 'w' || type == 'W') ? 1 : 0;
    parsed.push_back(p);
  }
  ks.names_.shrink_to_fit();
  if (kallsyms.bad()) return ErrnoError(kallsyms_path, errno);
  if (lines > 0 && nonzero == 0) {
    // kptr_restrict hides addresses from readers without CAP_SYSLOG.
    return Error(Errc::kPermission,
                 kallsyms_path +
                     ": all addresses read as 0 (kernel.kptr_restrict); run as root or set "
                     "sysctl kernel.kptr_restrict=0");
  }
  if (!have_text && !have_stext) {
    return Error(Errc::kCorrupt, kallsyms_path + ": no _text or _stext symbol");
  }
  ks.text_base_ = have_text ? text : stext;

  // Modules with their real extents, where /proc/modules exists.
  std::ifstream modules(modules_path);
  if (modules) {
    while (std::getline(modules, line)) {
      // name size refcount deps state base [taints]
      std::vector<std::string_view> f = Fields(line);
      if (f.size() < 6) continue;
      KernelModule m;
      m.name = std::string(f[0]);
      std::optional<uint64_t> size = ParseDecimal(f[1]), base = ParseHex(f[5]);
      if (!size || !base) continue;
      m.size = *size;
      m.base = *base;
      if (m.base == 0) {
        return Error(Errc::kPermission,
                     modules_path +
                         ": module addresses read as 0 (kernel.kptr_restrict); run "
                         "as root or set sysctl kernel.kptr_restrict=0");
      }
      ks.modules_.push_back(std::move(m));
    }
  } else if (errno != ENOENT) {
    return ErrnoError(modules_path, errno);
  }

  // Symbols per image, best name first at each address, then one per address.
  std::stable_sort(parsed.begin(), parsed.end(), [](const Parsed& a, const Parsed& b) {
    if (a.sym.addr != b.sym.addr) return a.sym.addr < b.sym.addr;
    return a.rank < b.rank;
  });
  std::vector<std::vector<KernelSymbol>> by_module(module_index.size());
  for (const Parsed& p : parsed) {
    std::vector<KernelSymbol>& v = by_module[p.module];
    if (!v.empty() && v.back().addr == p.sym.addr) continue;
    v.push_back(p.sym);
  }
  parsed = {};
  for (const auto& [name, m] : module_index) {
    if (by_module[m].empty()) continue;
    by_module[m].shrink_to_fit();
    ks.symbols_.emplace(name, std::move(by_module[m]));
  }

  // Modules only kallsyms knows about: extent guessed from their symbols.
  std::set<std::string> known;
  for (const KernelModule& m : ks.modules_) known.insert(m.name);
  for (const auto& [name, syms] : ks.symbols_) {
    if (name.empty() || syms.empty() || known.count(name) != 0) continue;
    KernelModule m;
    m.name = name;
    m.base = syms.front().addr;
    m.size = RoundUpPage(syms.back().addr + 1) - m.base;
    m.from_proc_modules = false;
    ks.modules_.push_back(std::move(m));
  }
  std::sort(ks.modules_.begin(), ks.modules_.end(),
            [](const KernelModule& a, const KernelModule& b) { return a.base < b.base; });

  const std::vector<KernelSymbol>* kernel = ks.SymbolsOf("");
  uint64_t last = kernel ? kernel->back().addr : ks.text_base_;
  ks.text_end_ = RoundUpPage(std::max(last, ks.text_base_) + 1);
  return ks;
}

std::optional<KernelLocation> KernelSymbols::Locate(uint64_t addr) const {
  KernelLocation r;
  auto it = std::upper_bound(modules_.begin(), modules_.end(), addr,
                             [](uint64_t a, const KernelModule& m) { return a < m.base; });
  if (it != modules_.begin() && addr - std::prev(it)->base < std::prev(it)->size) {
    const KernelModule& m = *std::prev(it);
    r.kind = KernelImageKind::kModule;
    r.module = m.name;
    r.offset = addr - m.base;
  } else if (addr >= text_base_ && addr < text_end_) {
    r.kind = KernelImageKind::kKernel;
    r.offset = addr - text_base_;
  } else {
    return std::nullopt;
  }
  return r;
}

std::optional<KernelSymbolHit> KernelSymbols::SymbolAt(uint64_t addr) const {
  std::optional<KernelLocation> where = Locate(addr);
  if (!where) return std::nullopt;
  const std::vector<KernelSymbol>* syms = SymbolsOf(where->module);
  const KernelSymbol* s = syms ? Nearest(*syms, addr) : nullptr;
  if (!s) return std::nullopt;
  return KernelSymbolHit{Name(*s), addr - s->addr};
}

std::optional<uint64_t> KernelSymbols::Address(const std::string& name) const {
  // The kernel's table first (the map orders "" before every module).
  for (const auto& [module, syms] : symbols_) {
    for (const KernelSymbol& s : syms) {
      if (Name(s) == name) return s.addr;
    }
  }
  return std::nullopt;
}

const std::vector<KernelSymbol>* KernelSymbols::SymbolsOf(std::string_view module) const {
  auto it = symbols_.find(module);
  return it == symbols_.end() ? nullptr : &it->second;
}

}  // namespace lcpi
