#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"

using namespace torchgauge::core;
using nlohmann::json;

namespace {

// The field a read refuses, and its message after "file: field '...': ".
struct Refusal {
  std::string field, message;
};
template <typename F>
Refusal RefusalOf(F read) {
  try {
    read();
  } catch (const FileError& e) {
    CHECK(e.file() == "f.json");
    const std::string what = e.what();
    const std::string prefix = e.field().empty() ? "f.json: " : "f.json: field '" + e.field() + "': ";
    CHECK(what.starts_with(prefix));
    return {e.field(), what.substr(prefix.size())};
  }
  return {"<accepted>", ""};
}

}  // namespace

TEST_CASE("json fields: types are checked and every refusal names the file and the dotted path") {
  const json j = json::parse(R"({"a": {"n": 2.5, "s": 3, "list": [1, "x"], "map": {"k": [0, -1]}}})");
  const JsonFields top(j, "f.json");
  const JsonFields a = top.Object("a");
  CHECK(a.path() == "a");
  Refusal r = RefusalOf([&] { (void)a.Get<int>("n"); });
  CHECK(r.field == "a.n");
  CHECK(r.message == "must be an integer (is 2.5)");
  r = RefusalOf([&] { (void)a.Get<std::string>("s"); });
  CHECK(r.message == "must be a string (is 3)");
  CHECK(RefusalOf([&] { (void)a.Get<std::vector<int>>("list"); }).field == "a.list[1]");
  r = RefusalOf([&] { (void)a.Get<std::map<std::string, std::vector<uint64_t>>>("map"); });
  CHECK(r.field == "a.map.k[1]");
  CHECK(r.message == "is out of range: must be an integer within [0, 18446744073709551615] (is -1)");
  r = RefusalOf([&] { (void)top.Get<int>("missing"); });
  CHECK(r.field == "missing");
  CHECK(r.message == "missing required field");
  CHECK(RefusalOf([&] { (void)a.Object("n"); }).message == "must be an object (is 2.5)");
  CHECK(RefusalOf([&] { (void)JsonFields(json::array(), "f.json"); }).message == "expected a JSON object");
}

TEST_CASE("json fields: integers must fit the type they are read into, never wrap or truncate") {
  const json j = json::parse(R"({"big": 4294967296, "huge": 18446744073709551615, "neg": -1, "float": 1e30})");
  const JsonFields f(j, "f.json");
  CHECK(RefusalOf([&] { (void)f.Get<int>("big"); }).field == "big");
  CHECK(f.Get<int64_t>("big") == 4294967296);
  CHECK(RefusalOf([&] { (void)f.Get<int64_t>("huge"); }).field == "huge");
  CHECK(f.Get<uint64_t>("huge") == std::numeric_limits<uint64_t>::max());
  CHECK(RefusalOf([&] { (void)f.Get<uint64_t>("neg"); }).field == "neg");
  CHECK(f.Get<int>("neg") == -1);
  CHECK(RefusalOf([&] { (void)f.Get<int64_t>("float"); }).message == "must be an integer (is 1e+30)");
  CHECK(f.Get<double>("big") == 4294967296.0);
  // Built in code, not parsed: a positive int is signed, the same checks hold.
  const json built = {{"n", int64_t{1} << 40}};
  CHECK(RefusalOf([&] { (void)JsonFields(built, "f.json").Get<int>("n"); }).field == "n");
  const json inf = {{"x", std::numeric_limits<double>::infinity()}};
  CHECK(RefusalOf([&] { (void)JsonFields(inf, "f.json").Get<double>("x"); }).message == "must be a finite number");
}

TEST_CASE("json fields: absent and null are the same for optional reads; required reads refuse both") {
  const json j = {{"null", nullptr}, {"one", 1}, {"obj", {{"k", true}}}};
  const JsonFields f(j, "f.json");
  CHECK(!f.Has("null"));
  CHECK(f.Find("null"));
  CHECK(f.GetOr("null", 7) == 7);
  CHECK(f.GetOr("absent", 7) == 7);
  CHECK(f.GetOr("one", 7) == 1);
  CHECK(!f.GetOpt<int>("null"));
  CHECK(*f.GetOpt<int>("one") == 1);
  CHECK(!f.OptObject("null"));
  CHECK(f.OptObject("obj")->Get<bool>("k"));
  CHECK(RefusalOf([&] { (void)f.Get<int>("null"); }).message == "must be an integer (is null)");
}

TEST_CASE("json fields: lower bounds, lists, one-of and arrays of objects") {
  const json j = json::parse(R"({"n": 0, "x": -0.5, "xs": [1, 2, -3], "mode": "fly",
                                 "items": [{"id": 1}, {"id": "two"}], "not_items": [3]})");
  const JsonFields f(j, "f.json");
  CHECK(RefusalOf([&] { (void)f.AtLeast("n", 1); }).message == "must be >= 1");
  CHECK(f.AtLeast("n", 0) == 0);
  CHECK(RefusalOf([&] { (void)f.OptAtLeast("x", 0.0); }).message == "must be >= 0");
  CHECK(!f.OptAtLeast("absent", 0.0));
  Refusal r = RefusalOf([&] { (void)f.EachAtLeast("xs", 0.0); });
  CHECK(r.field == "xs[2]");
  static constexpr const char* kModes[] = {"train", "eval"};
  CHECK(RefusalOf([&] { (void)f.OneOf("mode", kModes); }).message == "value 'fly' is not one of: train, eval");
  const auto items = f.Objects("items");
  REQUIRE(items.size() == 2);
  CHECK(items[0].Get<int>("id") == 1);
  CHECK(RefusalOf([&] { (void)items[1].Get<int>("id"); }).field == "items[1].id");
  CHECK(RefusalOf([&] { (void)f.Objects("not_items"); }).field == "not_items[0]");
  CHECK(RefusalOf([&] { (void)f.Objects("n"); }).message == "must be an array (is 0)");
}

TEST_CASE("json fields: Opt and NullIfEmpty write an unset value as null") {
  CHECK(Opt(std::optional<int>()).is_null());
  CHECK(Opt(std::optional<int>(3)) == 3);
  CHECK(Opt(std::optional<std::string>("a")) == "a");
  CHECK(NullIfEmpty("").is_null());
  CHECK(NullIfEmpty("x") == "x");
}
