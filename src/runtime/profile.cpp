#include "runtime/profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime/host_allocator.h"
#include "runtime/host_executable.h"
#include "runtime/thread_pool.h"

namespace tessel {

ProfileReport profile(const Graph& g, const Backend& backend, std::span<const HostTensor> args,
                      int runs) {
  if (runs < 1) throw_error(ErrorKind::Value, "[profile] runs must be >= 1, got ", runs);
  ProfileReport r;
  r.backend = backend.name();
  r.runs = runs;
  r.threads = num_threads();
  r.nodes_before = g.size();
  std::unique_ptr<Executable> exe = compile_for(g, backend);
  std::vector<double> per_node;
  const Graph* compiled = nullptr;
  if (auto* host = dynamic_cast<HostExecutable*>(exe.get())) {
    compiled = &host->graph();
    r.arena_bytes = host->memory_plan().arena_bytes;
    r.naive_bytes = host->memory_plan().naive_bytes;
    r.nodes_after = compiled->size();
  }
  exe->run(args);  // warm-up: caches, allocator, thread pool
  std::vector<std::pair<int, OpKind>> order;
  std::map<int, double> seconds;
  exe->set_profiler([&](const ProfileEvent& e) {
    if (!seconds.count(e.node)) order.push_back({e.node, e.kind});
    seconds[e.node] += e.seconds;
  });
  size_t base = host_memory_stats().in_use;
  host_memory_reset_peak();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) exe->run(args);
  std::chrono::duration<double> total = std::chrono::steady_clock::now() - start;
  r.peak_bytes = host_memory_stats().peak_in_use - std::min(base, host_memory_stats().peak_in_use);
  r.seconds_per_run = total.count() / runs;
  for (auto [node, kind] : order) {
    std::string what = op_name(kind);
    if (compiled) {
      const Node& n = compiled->node(node);
      what += "(" + n.attrs.to_string(n.info()) + ") ->";
      for (const TensorType& t : n.outputs) what += " " + t.str();
    }
    r.ops.push_back({node, kind, what, seconds[node] / runs});
  }
  return r;
}

namespace {
std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / 1048576.0);
  return buf;
}
}  // namespace

std::string profile_text(const ProfileReport& r) {
  std::ostringstream os;
  char line[512];
  std::snprintf(
      line, sizeof line, "backend %s, %d threads, %d runs: %.3f ms per run; graph %d -> %d nodes\n",
      r.backend.c_str(), r.threads, r.runs, r.seconds_per_run * 1e3, r.nodes_before, r.nodes_after);
  os << line;
  os << "memory: peak " << mib(r.peak_bytes) << " allocated while running; planned arena "
     << mib(r.arena_bytes) << " for intermediates (" << mib(r.naive_bytes) << " without reuse)\n\n";
  double sum = 0;
  for (const OpProfile& op : r.ops) sum += op.seconds;
  std::vector<const OpProfile*> sorted;
  for (const OpProfile& op : r.ops)
    if (op.kind != OpKind::Input && op.kind != OpKind::Param && op.kind != OpKind::Constant)
      sorted.push_back(&op);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return a->seconds > b->seconds; });
  os << "    ms      %   node  op\n";
  for (const OpProfile* op : sorted) {
    std::snprintf(line, sizeof line, "%8.3f %6.1f  %%%-4d  %s\n", op->seconds * 1e3,
                  sum > 0 ? 100 * op->seconds / sum : 0.0, op->node, op->what.c_str());
    os << line;
  }
  return os.str();
}

std::string profile_json(const ProfileReport& r) {
  nlohmann::json j;
  j["backend"] = r.backend;
  j["threads"] = r.threads;
  j["runs"] = r.runs;
  j["seconds_per_run"] = r.seconds_per_run;
  j["peak_bytes"] = r.peak_bytes;
  j["arena_bytes"] = r.arena_bytes;
  j["naive_bytes"] = r.naive_bytes;
  j["nodes_before"] = r.nodes_before;
  j["nodes_after"] = r.nodes_after;
  j["ops"] = nlohmann::json::array();
  for (const OpProfile& op : r.ops)
    j["ops"].push_back(
        {{"node", op.node}, {"op", op_name(op.kind)}, {"what", op.what}, {"seconds", op.seconds}});
  return j.dump(2) + "\n";
}

}  // namespace tessel
