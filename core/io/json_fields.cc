#include "core/io/json_fields.h"

#include <cstdio>

namespace torchgauge::core {

using nlohmann::json;

namespace json_fields_detail {

std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return v.dump();
    default:
      return v.type_name();
  }
}

void WrongType(const std::filesystem::path& file, const std::string& name, const char* expected, const json& v) {
  throw FileError(file, name, std::string("must be ") + expected + " (is " + Describe(v) + ")");
}

void OutOfRange(const std::filesystem::path& file, const std::string& name, const std::string& min,
                const std::string& max, const json& v) {
  throw FileError(file, name,
                  "is out of range: must be an integer within [" + min + ", " + max + "] (is " + Describe(v) + ")");
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace json_fields_detail

JsonFields::JsonFields(const json& j, std::filesystem::path file, std::string path)
    : j_(&j), file_(std::move(file)), path_(std::move(path)) {
  if (!j.is_object()) {
    throw FileError(
        file_, path_,
        path_.empty() ? "expected a JSON object" : "must be an object (is " + json_fields_detail::Describe(j) + ")");
  }
}

const json* JsonFields::Find(std::string_view key) const {
  const auto it = j_->find(key);
  return it == j_->end() ? nullptr : &*it;
}

bool JsonFields::Has(std::string_view key) const {
  const json* v = Find(key);
  return v && !v->is_null();
}

std::string JsonFields::Name(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void JsonFields::Fail(std::string_view key, const std::string& message) const {
  throw FileError(file_, Name(key), message);
}

std::string JsonFields::OneOf(std::string_view key, std::span<const char* const> allowed) const {
  auto v = Get<std::string>(key);
  for (const char* a : allowed) {
    if (v == a) return v;
  }
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  Fail(key, "value '" + v + "' is not one of: " + list);
}

JsonFields JsonFields::Object(std::string_view key) const {
  const json* v = Find(key);
  if (!v) Fail(key, "missing required field");
  return JsonFields(*v, file_, Name(key));
}

std::optional<JsonFields> JsonFields::OptObject(std::string_view key) const {
  const json* v = Find(key);
  if (!v || v->is_null()) return std::nullopt;
  return JsonFields(*v, file_, Name(key));
}

std::vector<JsonFields> JsonFields::Objects(std::string_view key) const {
  const json* v = Find(key);
  if (!v) Fail(key, "missing required field");
  if (!v->is_array()) json_fields_detail::WrongType(file_, Name(key), "an array", *v);
  std::vector<JsonFields> out;
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) out.emplace_back((*v)[i], file_, Name(key) + "[" + std::to_string(i) + "]");
  return out;
}

int CheckVersionedHeader(const JsonFields& f, int newest, std::string_view kind) {
  const int version = f.Get<int>("schema_version");
  if (version > newest)
    f.Fail("schema_version",
           std::to_string(version) + " is newer than this program reads (" + std::to_string(newest) + "): update it");
  if (version < 1) f.Fail("schema_version", "must be >= 1");
  if (f.Get<std::string>("kind") != kind) f.Fail("kind", "must be " + std::string(kind));
  return version;
}

}  // namespace torchgauge::core
