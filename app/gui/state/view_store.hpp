// Each view's own state: its selection, its caches, anything it keeps between frames.
// A view declares the type in its own file and asks for it here; the state is made
// on first use and lives as long as the app. So a new view adds no field to AppState
// (see views/registry.hpp for the rest of what a new view touches).
#pragma once

#include <memory>
#include <typeindex>
#include <unordered_map>

namespace mha::gui {

class ViewStore {
 public:
  // The view's state of type T (a type the view's file declares), made on first use.
  template <class T>
  T& Get() {
    std::shared_ptr<void>& slot = slots_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>();
    return *static_cast<T*>(slot.get());
  }
  // Null until Get<T>() made it: what reads const state (probe, dump) sees.
  template <class T>
  const T* Find() const {
    const auto it = slots_.find(std::type_index(typeid(T)));
    return it == slots_.end() ? nullptr : static_cast<const T*>(it->second.get());
  }

 private:
  std::unordered_map<std::type_index, std::shared_ptr<void>> slots_;
};

}  // namespace mha::gui
