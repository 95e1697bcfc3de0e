// Building Mustache page data. Only the .cc files that build page data
// include this (it pulls in the whole template engine); headers use
// mustache_fwd.h.
#pragma once

#include <string>
#include <utility>

#include <kainjow/mustache.hpp>

#include "reporter/output/mustache_fwd.h"

namespace torchgauge::reporter {

// kainjow's set() and push_back() copy their argument, so building a page's
// data tree that way copies every nested list once per level. These move it
// in instead (the containers they reach are the data's own, never const).
template <typename T>
void Set(mu::data& obj, const std::string& key, T&& value) {
  mu::data v(std::forward<T>(value));
  obj.set(key, mu::data(false));
  *const_cast<mu::data*>(obj.get(key)) = std::move(v);
}
inline void Append(mu::data& list, mu::data&& item) {
  const_cast<mu::list&>(list.list_value()).push_back(std::move(item));
}
inline mu::data List() { return mu::data(mu::data::type::list); }

}  // namespace torchgauge::reporter
