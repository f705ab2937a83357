#include "block_reader.h"

namespace attnlens_bindings {

emscripten::val name_list(const char* const* names, std::size_t count) {
  emscripten::val list = emscripten::val::array();
  for (std::size_t i = 0; i < count; ++i) list.set(i, emscripten::val(names[i]));
  return list;
}

emscripten::val slots_and_arrays(emscripten::val slots, emscripten::val arrays) {
  emscripten::val block = emscripten::val::object();
  block.set("slots", slots);
  block.set("arrays", arrays);
  return block;
}

}  // namespace attnlens_bindings
