// The backend interface. A backend declares what it runs in a claim table — per (op kind,
// variant, dtype), how: natively, by decomposition into kinds it runs natively, or staged
// through the host (shown as such, never hidden). Legalization consults the table; the parity
// harness proves every claimed cell against the reference backend.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tessel/host_tensor.h"

namespace tessel {

enum class How : uint8_t { Native, Decomposed, Host };
const char* how_name(How how);

struct Claim {
  OpKind kind;
  DTypeSet dtypes;
  How how;
  std::vector<int> variants;  // empty = every variant of the kind
};

class ClaimTable {
 public:
  void add(Claim claim) { claims_.push_back(std::move(claim)); }
  // How a (kind, variant, dtype) cell is claimed; nullopt = not claimed.
  std::optional<How> find(OpKind kind, int variant, DType dtype) const;
  // Every dtype claimed for (kind, variant), any how.
  DTypeSet dtypes(OpKind kind, int variant) const;
  bool claims_kind(OpKind kind) const;
  const std::vector<Claim>& all() const { return claims_; }

 private:
  std::vector<Claim> claims_;
};

// The dtype a node is claimed by: its first present non-bool input's (else its first input's),
// or its first output's for sources.
DType claim_dtype(const Graph& g, const Node& node);

// Per-node timing hook; set on an Executable to profile it.
struct ProfileEvent {
  int node;
  OpKind kind;
  double seconds;
};
using Profiler = std::function<void(const ProfileEvent&)>;

class Executable {
 public:
  virtual ~Executable() = default;
  // `args` bind the graph's Input and Param nodes in creation order; returns graph.outputs.
  virtual std::vector<HostTensor> run(std::span<const HostTensor> args) = 0;
  void set_profiler(Profiler p) { profiler_ = std::move(p); }

 protected:
  Profiler profiler_;
};

struct CompileOptions {
  // The parity harness's checked mode: outputs poisoned before each kernel and guarded against
  // out-of-bounds writes (slower; see HostExecOptions for host backends).
  bool checked = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  virtual const ClaimTable& claims() const = 0;
  // `g` must be legalized for this backend.
  virtual std::unique_ptr<Executable> compile(const Graph& g,
                                              const CompileOptions& options) const = 0;
  std::unique_ptr<Executable> compile(const Graph& g) const { return compile(g, {}); }
};

// Registry, in registration order (the coverage matrix's column order).
void register_backend(std::unique_ptr<Backend> backend);
std::vector<const Backend*> backends();
// Throws Device error listing the registered names when unknown.
const Backend& backend(std::string_view name);

}  // namespace tessel
