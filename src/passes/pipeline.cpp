#include <cstdlib>
#include <iostream>

#include "passes/passes.h"

namespace tessel {

std::unique_ptr<Executable> compile_for(const Graph& g, const Backend& backend,
                                        const CompileOptions& options) {
  auto env_on = [](const char* name) {
    const char* e = std::getenv(name);
    return e && std::string(e) == "1";
  };
  static const bool dump = env_on("TESSEL_DUMP_PASSES");
#ifdef TESSEL_DEBUG_VERIFY
  static const bool check = true;
#else
  static const bool check = env_on("TESSEL_VERIFY");  // the test suite sets it
#endif
  Graph cur = g;
  auto step = [&](const char* name, Graph next) {
    cur = std::move(next);
    if (dump) std::cerr << "--- after " << name << " ---\n" << cur.to_string();
    if (check) verify(cur, name);
  };
  step("fold_constants", fold_constants(cur));
  step("fold_batch_norms", fold_batch_norms(cur));
  step("cse", eliminate_common_subexpressions(cur));
  step("dce", eliminate_dead_code(cur));
  step("legalize", legalize(cur, backend));
  step("dce", eliminate_dead_code(cur));
  static const bool fusion = [] {
    const char* e = std::getenv("TESSEL_FUSION");
    return !e || std::string(e) != "0";
  }();
  if (fusion) step("fuse", fuse(cur, backend));
  return backend.compile(cur, options);
}

}  // namespace tessel
