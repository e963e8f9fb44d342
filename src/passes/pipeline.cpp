#include <cstdlib>
#include <iostream>

#include "passes/passes.h"

namespace tessel {

std::unique_ptr<Executable> compile_for(const Graph& g, const Backend& backend) {
  static const bool dump = [] {
    const char* e = std::getenv("TESSEL_DUMP_PASSES");
    return e && std::string(e) == "1";
  }();
  Graph cur = g;
  auto step = [&](const char* name, Graph next) {
    cur = std::move(next);
    if (dump) std::cerr << "--- after " << name << " ---\n" << cur.to_string();
#ifdef TESSEL_DEBUG_VERIFY
    verify(cur, name);
#endif
  };
  step("fold_constants", fold_constants(cur));
  step("cse", eliminate_common_subexpressions(cur));
  step("dce", eliminate_dead_code(cur));
  step("legalize", legalize(cur, backend));
  step("dce", eliminate_dead_code(cur));
  return backend.compile(cur);
}

}  // namespace tessel
