// SPDX-License-Identifier: Apache-2.0
#include "fetch/backoff.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl::fetch;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("backoff_delay doubles per retry and is capped", "[fetch][backoff]") {
  struct Row {
    int retry;
    long base_ms;
    long max_ms;
    double unit;
    long expected_ms;
  };
  // unit 0 -> the lower bound d/2, unit just below 1 -> (almost) d.
  const Row rows[] = {
      {1, 500, 8000, 0.0, 250},  {1, 500, 8000, 0.999999, 499},
      {2, 500, 8000, 0.0, 500},  {3, 500, 8000, 0.0, 1000},
      {4, 500, 8000, 0.0, 2000}, {5, 500, 8000, 0.0, 4000},
      {6, 500, 8000, 0.0, 4000}, {6, 500, 8000, 0.999999, 7999},
      {7, 500, 8000, 0.0, 4000}, {1000, 500, 8000, 0.0, 4000}, // no overflow
      {0, 500, 8000, 0.0, 250},  {-3, 500, 8000, 0.0, 250},    // clamped to 1
      {3, 500, 8000, 0.5, 1500}, {2, 1000, 1500, 0.0, 750},    // cap below 2*base
      {1, 0, 8000, 0.5, 0},      {3, 500, 0, 0.5, 0},          // disabled
      {1, 500, 8000, -5.0, 250}, {1, 500, 8000, 7.0, 500},     // unit clamped
      {1, 1, 8000, 0.0, 0},      {1, 1, 8000, 0.99, 0},
  };
  for (const auto& row : rows) {
    CAPTURE(row.retry, row.base_ms, row.max_ms, row.unit);
    CHECK(backoff_delay(row.retry, milliseconds(row.base_ms), milliseconds(row.max_ms),
                        std::nullopt, row.unit)
              .count() == row.expected_ms);
  }
}

TEST_CASE("backoff_delay jitter stays within [d/2, d]", "[fetch][backoff]") {
  for (int retry = 1; retry <= 8; ++retry) {
    const long d = std::min(500L << (retry - 1), 8000L);
    for (double unit = 0.0; unit < 1.0; unit += 0.01) {
      auto delay = backoff_delay(retry, milliseconds(500), milliseconds(8000), std::nullopt, unit);
      CAPTURE(retry, unit);
      CHECK(delay.count() >= d / 2);
      CHECK(delay.count() <= d);
    }
  }
}

TEST_CASE("backoff_delay honours Retry-After, capped by max, without jitter", "[fetch][backoff]") {
  struct Row {
    long retry_after_s;
    long max_ms;
    long expected_ms;
  };
  const Row rows[] = {
      {0, 8000, 0},     {1, 8000, 1000},     {3, 8000, 3000}, {8, 8000, 8000},
      {30, 8000, 8000}, {86400, 8000, 8000}, {2, 500, 500},   {2, 0, 0},
  };
  for (const auto& row : rows) {
    CAPTURE(row.retry_after_s, row.max_ms);
    for (double unit : {0.0, 0.5, 0.99}) {
      CHECK(backoff_delay(1, milliseconds(500), milliseconds(row.max_ms),
                          seconds(row.retry_after_s), unit)
                .count() == row.expected_ms);
      // The retry number does not matter either.
      CHECK(backoff_delay(5, milliseconds(500), milliseconds(row.max_ms),
                          seconds(row.retry_after_s), unit)
                .count() == row.expected_ms);
    }
  }
}

TEST_CASE("parse_retry_after reads delta-seconds and HTTP dates", "[fetch][backoff]") {
  // 2015-10-21T07:28:00Z = 1445412480.
  const auto now = std::chrono::system_clock::time_point(seconds(1445412480));
  struct Row {
    const char* value;
    std::optional<long> expected_s;
  };
  const Row rows[] = {
      {"0", 0},
      {"120", 120},
      {"  7 ", 7},
      {"999999999", 86400}, // clamped to a day
      {"Wed, 21 Oct 2015 07:28:00 GMT", 0},
      {"Wed, 21 Oct 2015 07:28:30 GMT", 30},
      {"Wed, 21 Oct 2015 08:28:00 GMT", 3600},
      {"Thu, 22 Oct 2015 07:28:00 GMT", 86400},
      {"Tue, 20 Oct 2015 07:28:00 GMT", 0}, // in the past
      {"Sun, 01 Mar 2016 00:00:00 GMT", 86400},
      {"", std::nullopt},
      {"-5", std::nullopt},
      {"1.5", std::nullopt},
      {"soon", std::nullopt},
      {"Wednesday, 21-Oct-15 07:28:00 GMT", std::nullopt}, // obsolete RFC 850 form
      {"Wed, 21 Oct 2015 07:28:00 UTC", std::nullopt},
      {"Wed, 21 Foo 2015 07:28:00 GMT", std::nullopt},
      {"Wed, 32 Oct 2015 07:28:00 GMT", std::nullopt},
      {"Wed, 21 Oct 2015 24:28:00 GMT", std::nullopt},
  };
  for (const auto& row : rows) {
    CAPTURE(row.value);
    auto got = parse_retry_after(row.value, now);
    REQUIRE(got.has_value() == row.expected_s.has_value());
    if (got) {
      CHECK(got->count() == *row.expected_s);
    }
  }
}

TEST_CASE("parse_retry_after handles dates around leap days", "[fetch][backoff]") {
  // 2024-02-29T00:00:00Z = 1709164800; 2000-03-01T00:00:00Z = 951868800.
  CHECK(parse_retry_after("Thu, 29 Feb 2024 00:00:10 GMT",
                          std::chrono::system_clock::time_point(seconds(1709164800)))
            ->count() == 10);
  CHECK(parse_retry_after("Wed, 01 Mar 2000 00:01:00 GMT",
                          std::chrono::system_clock::time_point(seconds(951868800)))
            ->count() == 60);
}
