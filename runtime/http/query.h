// The query parameters a route takes, declared once as data, and the one
// check every request's query string passes before its handler runs.
//
// A route's parameters are a list of {name, kind} (QueryParam). The router
// (http_server.h) gets the table of every route's list (RouteQueries) when
// it is made, and Dispatch checks a request against its route's list:
//   - the target's percent-encoding is well formed ("%4" or "%zz" is not);
//   - at most kMaxQueryParams parameters, each named by the route (an
//     unknown name is refused: a typo never goes unnoticed);
//   - each given once, but for a kind that takes a list (repeats are
//     joined with ',', as if given comma-separated);
//   - each value valid UTF-8, at most its kind's bytes, and of its kind
//     (QueryKindRule: a count is digits, a name has no control characters,
//     a time is RFC 3339, ...).
// An empty value counts as absent (`?status=` is no filter). A failed check
// is InvalidArgument naming the parameter ("query actor: not valid UTF-8"),
// answered 400 before the handler runs. Handlers then read the validated
// values (api.h's Query*), and add only the rules that belong to one route
// (a status one pool knows, a count's upper bound).
//
// Route parameters ({id} in a pattern) pass the same name rule: "path id:
// ...".
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace limbic::runtime {

//! What a query parameter holds; each kind has one rule (QueryKindRule).
enum class QueryKind {
  kText,      //!< free text (search words): as kName, but tab and line breaks allowed
  kName,      //!< an id, a name, a status: UTF-8, no control or bidi-override characters
  kNames,     //!< names separated by ',' (may be repeated: type=a&type=b)
  kCount,     //!< a non-negative integer: decimal digits
  kDuration,  //!< "90s", "5m", "1h", "2d" (base/time.h ParseDuration)
  kTime,      //!< RFC 3339 (base/time.h ParseTime)
  kDate,      //!< YYYY-MM-DD, a day the calendar has
  kBool,      //!< true or false
};

//! One parameter of a route.
struct QueryParam {
  std::string_view name;
  QueryKind kind;
};

//! The parameters of one route: method and pattern exactly as registered.
struct RouteQueries {
  std::string_view method;
  std::string_view pattern;
  std::vector<QueryParam> params;
};

//! At most this many parameters in one query string.
inline constexpr size_t kMaxQueryParams = 32;

//! A kind's rule, for checks and for docs: `what` says what a value must be
//! ("a non-negative integer"), `max_bytes` bounds a value.
struct QueryKindRule {
  QueryKind kind;
  const char* what;
  size_t max_bytes;
  Status (*check)(std::string_view value);  //!< OK, or why not (no name: the caller adds it)
};
const QueryKindRule& RuleOf(QueryKind kind);

//! `value` checked as `kind` (its bound, UTF-8, its rule), the error
//! starting with `where` ("argument \"name\"").
Status CheckParamValue(const std::string& where, QueryKind kind, std::string_view value);
//! CheckParamValue naming "query <name>".
Status CheckQueryValue(std::string_view name, QueryKind kind, std::string_view value);

//! A route parameter's decoded value, checked as a name; the error names
//! "path <name>".
Status CheckPathParam(std::string_view name, std::string_view value);

//! `s` percent-decoded ('+' as a space when `plus_is_space`); InvalidArgument
//! naming the offset when a '%' is not followed by two hex digits.
Result<std::string> PercentDecode(std::string_view s, bool plus_is_space);

//! The query string's items (after '?'), decoded, in order, repeats kept,
//! or the first decoding error. Pieces without a name ("&&", "=v") are
//! kept with an empty name: CheckQuery refuses them.
Result<std::vector<std::pair<std::string, std::string>>> SplitQuery(std::string_view query);

//! `items` checked against `params` (see the file comment); `*out` gets
//! the values by name (lists joined with ','), empty ones left out.
//! `route` ("GET /v1/events") is named in the error for an unknown name.
Status CheckQuery(const std::vector<std::pair<std::string, std::string>>& items,
                  const std::vector<QueryParam>& params, std::string_view route,
                  std::map<std::string, std::string>* out);

}  // namespace limbic::runtime
