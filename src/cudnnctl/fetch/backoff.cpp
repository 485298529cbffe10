// SPDX-License-Identifier: Apache-2.0
#include "fetch/backoff.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <ctime>

namespace cudnnctl::fetch {

using std::chrono::milliseconds;
using std::chrono::seconds;

milliseconds backoff_delay(int retry, milliseconds base, milliseconds max,
                           std::optional<seconds> retry_after, double unit) {
  if (max.count() <= 0) {
    return milliseconds{0};
  }
  if (retry_after) {
    // The server knows best when it will be ready, but we never wait longer than max.
    milliseconds wanted = std::chrono::duration_cast<milliseconds>(*retry_after);
    return std::clamp(wanted, milliseconds{0}, max);
  }
  if (base.count() <= 0) {
    return milliseconds{0};
  }
  retry = std::max(retry, 1);
  // Doubling without overflow: stop as soon as the cap is reached.
  int64_t delay = base.count();
  for (int i = 1; i < retry && delay < max.count(); ++i) {
    delay *= 2;
  }
  delay = std::min(delay, static_cast<int64_t>(max.count()));
  unit = std::clamp(unit, 0.0, 1.0);
  const int64_t half = delay / 2;
  const auto jitter = static_cast<int64_t>(static_cast<double>(delay - half) * unit);
  return milliseconds{std::min(delay, half + jitter)};
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil), so
// that no timegm/locale-dependent strptime is involved.
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// "Wed, 21 Oct 2015 07:28:00 GMT" -> seconds since the epoch.
static std::optional<int64_t> parse_imf_fixdate(std::string_view s) {
  static constexpr std::array<std::string_view, 7> k_days{"Mon", "Tue", "Wed", "Thu",
                                                          "Fri", "Sat", "Sun"};
  static constexpr std::array<std::string_view, 12> k_months{
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // Fixed layout: "Www, DD Mmm YYYY HH:MM:SS GMT" (29 characters).
  if (s.size() != 29 || s.substr(3, 2) != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
      s[19] != ':' || s[22] != ':' || s.substr(25) != " GMT") {
    return std::nullopt;
  }
  if (std::find(k_days.begin(), k_days.end(), s.substr(0, 3)) == k_days.end()) {
    return std::nullopt;
  }
  auto month_it = std::find(k_months.begin(), k_months.end(), s.substr(8, 3));
  if (month_it == k_months.end()) {
    return std::nullopt;
  }
  auto day = util::parse_u64(s.substr(5, 2));
  auto year = util::parse_u64(s.substr(12, 4));
  auto hour = util::parse_u64(s.substr(17, 2));
  auto minute = util::parse_u64(s.substr(20, 2));
  auto second = util::parse_u64(s.substr(23, 2));
  if (!day || !year || !hour || !minute || !second || *day < 1 || *day > 31 || *hour > 23 ||
      *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  const auto month = static_cast<unsigned>(month_it - k_months.begin() + 1);
  const int64_t days =
      days_from_civil(static_cast<int64_t>(*year), month, static_cast<unsigned>(*day));
  return days * 86400 + static_cast<int64_t>(*hour * 3600 + *minute * 60 + *second);
}

std::optional<seconds> parse_retry_after(std::string_view value,
                                         std::chrono::system_clock::time_point now) {
  value = util::trim(value);
  if (value.empty()) {
    return std::nullopt;
  }
  if (auto delta = util::parse_u64(value)) {
    // A day is more than any cap we use; clamping keeps the conversion from overflowing.
    return seconds{static_cast<int64_t>(std::min<uint64_t>(*delta, 86400))};
  }
  auto when = parse_imf_fixdate(value);
  if (!when) {
    return std::nullopt;
  }
  const int64_t now_s = std::chrono::duration_cast<seconds>(now.time_since_epoch()).count();
  return seconds{std::clamp<int64_t>(*when - now_s, 0, 86400)};
}

} // namespace cudnnctl::fetch
