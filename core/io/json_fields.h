// Reading the fields of a parsed JSON document, with the checks every reader
// of the project's files needs, in one place: a field by key, its type,
// integers that fit the C++ type they land in, finite numbers, lower bounds,
// a value from a fixed list, nested objects and arrays, and optional fields
// (absent or null). Every refusal is a FileError naming the file and the
// field's dotted path ("timing.samples_ms[3]"), so that a bad file is
// described the same way whichever reader meets it: run results, manifests,
// peaks, the paper's Table 1 and the collector's suite files.
//
// The range checks are here because nlohmann converts with plain casts: a
// float (1e30) read as an int is undefined behaviour and -1 read as a
// uint64_t wraps (both found by the fuzzers, once per reader before there
// was one reader).
//
// Also here: the writers' two helpers for a value that may be unset, Opt (an
// optional: its value or null) and NullIfEmpty (a string where "" is null).
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/json_io.h"

namespace torchgauge::core {

// An optional value as JSON: the value, or null when it is unset.
template <typename T>
nlohmann::json Opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
// A string of a struct that keeps a nullable field as "" (the manifest's).
inline nlohmann::json NullIfEmpty(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

namespace json_fields_detail {

template <typename T>
struct IsVector : std::false_type {};
template <typename U>
struct IsVector<std::vector<U>> : std::true_type {};
template <typename T>
struct IsStringMap : std::false_type {};
template <typename U>
struct IsStringMap<std::map<std::string, U>> : std::true_type {};

// What a value is, for a message: numbers as written, other types by name
// (a string's text may be anything, so it is not repeated).
std::string Describe(const nlohmann::json& v);
[[noreturn]] void WrongType(const std::filesystem::path& file, const std::string& name, const char* expected,
                            const nlohmann::json& v);
[[noreturn]] void OutOfRange(const std::filesystem::path& file, const std::string& name, const std::string& min,
                             const std::string& max, const nlohmann::json& v);
std::string FormatNumber(double v);

template <typename T, typename Name>
T Integer(const nlohmann::json& v, const std::filesystem::path& file, const Name& name) {
  if (!v.is_number_integer()) WrongType(file, name(), "an integer", v);
  constexpr T kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
  bool fits;
  if (v.is_number_unsigned()) {
    fits = v.get<uint64_t>() <= static_cast<uint64_t>(kMax);
  } else if constexpr (std::is_signed_v<T>) {
    const int64_t s = v.get<int64_t>();
    fits = s >= static_cast<int64_t>(kMin) && s <= static_cast<int64_t>(kMax);
  } else {
    const int64_t s = v.get<int64_t>();
    fits = s >= 0 && static_cast<uint64_t>(s) <= static_cast<uint64_t>(kMax);
  }
  if (!fits) OutOfRange(file, name(), std::to_string(kMin), std::to_string(kMax), v);
  return v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>()) : static_cast<T>(v.get<int64_t>());
}

// `v` as `T`: bool, an integer type, double, std::string, or a std::vector
// or std::map<std::string, ...> of those. `name()` makes the dotted path; it
// is called only on error, so that a clean read builds no strings.
template <typename T, typename Name>
T As(const nlohmann::json& v, const std::filesystem::path& file, const Name& name) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) WrongType(file, name(), "a boolean", v);
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    return Integer<T>(v, file, name);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) WrongType(file, name(), "a number", v);
    const T d = v.get<T>();
    if (!std::isfinite(d)) throw FileError(file, name(), "must be a finite number");
    return d;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) WrongType(file, name(), "a string", v);
    return v.get_ref<const std::string&>();
  } else if constexpr (IsVector<T>::value) {
    if (!v.is_array()) WrongType(file, name(), "an array", v);
    T out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(As<typename T::value_type>(v[i], file, [&] { return name() + "[" + std::to_string(i) + "]"; }));
    }
    return out;
  } else if constexpr (IsStringMap<T>::value) {
    if (!v.is_object()) WrongType(file, name(), "an object", v);
    T out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& key = it.key();  // not a structured binding: clang < 16 cannot capture one
      out.emplace(key, As<typename T::mapped_type>(*it, file, [&] { return name() + "." + key; }));
    }
    return out;
  } else {
    static_assert(sizeof(T) == 0, "JsonFields cannot read this type");
  }
}

}  // namespace json_fields_detail

// One JSON object of a file, with its dotted path, read field by field.
// Absent and null are the same for the optional reads (GetOr, GetOpt,
// OptObject, Has); a required read (Get, Object) refuses both, with
// "missing required field" for an absent one. Holds a reference to the JSON:
// it must outlive the JsonFields.
class JsonFields {
 public:
  // The object `j` found at `path` ("" for the document itself) of `file`;
  // throws FileError when it is not an object.
  JsonFields(const nlohmann::json& j, std::filesystem::path file, std::string path = "");

  // One lookup per field: a run file has ~90 fields and a cold site render
  // reads every run file, so each read below finds its key once.
  const nlohmann::json* Find(std::string_view key) const;
  bool Has(std::string_view key) const;          // present and not null
  std::string Name(std::string_view key) const;  // the field's dotted path
  [[noreturn]] void Fail(std::string_view key, const std::string& message) const;
  const nlohmann::json& raw() const { return *j_; }
  const std::filesystem::path& file() const { return file_; }
  const std::string& path() const { return path_; }

  template <typename T>
  T Get(std::string_view key) const {
    const nlohmann::json* v = Find(key);
    if (!v) Fail(key, "missing required field");
    return As<T>(*v, key);
  }
  template <typename T>
  T GetOr(std::string_view key, T fallback) const {
    const nlohmann::json* v = Find(key);
    return v && !v->is_null() ? As<T>(*v, key) : fallback;
  }
  template <typename T>
  std::optional<T> GetOpt(std::string_view key) const {
    const nlohmann::json* v = Find(key);
    if (!v || v->is_null()) return std::nullopt;
    return As<T>(*v, key);
  }
  // A number with a lower bound ("must be >= min" below it).
  template <typename T>
  T AtLeast(std::string_view key, T min) const {
    const T v = Get<T>(key);
    if (!(v >= min)) Fail(key, AtLeastMessage(min));
    return v;
  }
  template <typename T>
  std::optional<T> OptAtLeast(std::string_view key, T min) const {
    std::optional<T> v = GetOpt<T>(key);
    if (v && !(*v >= min)) Fail(key, AtLeastMessage(min));
    return v;
  }
  // A required array of numbers, each >= min (named key[i] when it is not).
  template <typename T>
  std::vector<T> EachAtLeast(std::string_view key, T min) const {
    std::vector<T> v = Get<std::vector<T>>(key);
    for (size_t i = 0; i < v.size(); ++i) {
      if (!(v[i] >= min)) throw FileError(file_, Name(key) + "[" + std::to_string(i) + "]", AtLeastMessage(min));
    }
    return v;
  }
  // A required string that must be one of `allowed`.
  std::string OneOf(std::string_view key, std::span<const char* const> allowed) const;

  JsonFields Object(std::string_view key) const;                    // a required object
  std::optional<JsonFields> OptObject(std::string_view key) const;  // absent or null: nullopt
  // A required array whose elements are objects, each with its path (key[i]).
  std::vector<JsonFields> Objects(std::string_view key) const;

 private:
  template <typename T>
  T As(const nlohmann::json& v, std::string_view key) const {
    return json_fields_detail::As<T>(v, file_, [&] { return Name(key); });
  }
  template <typename T>
  static std::string AtLeastMessage(T min) {
    if constexpr (std::is_integral_v<T>) {
      return "must be >= " + std::to_string(min);
    } else {
      return "must be >= " + json_fields_detail::FormatNumber(min);
    }
  }

  const nlohmann::json* j_;
  std::filesystem::path file_;
  std::string path_;
};

// The header of a versioned file the project writes (triage, tracking,
// alerts, culprits): "kind" must be `kind` and "schema_version" within
// 1..newest; a newer file needs a newer program. Returns the version.
int CheckVersionedHeader(const JsonFields& f, int newest, std::string_view kind);

}  // namespace torchgauge::core
