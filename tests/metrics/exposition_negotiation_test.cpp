// Tests for the negotiation half of include/inferscope/metrics/exposition.h: Accept, Accept-Encoding,
// Content-Type, gzip and render_scrape.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace inferscope::metrics {
namespace {

constexpr auto kTextResponse = ExpositionFormat::kPrometheusText004;
constexpr auto kOmResponse = ExpositionFormat::kOpenMetrics100;

std::string gunzip(const std::string& data) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  int rc = Z_OK;
  for (int round = 0; round < 10000 && rc == Z_OK; ++round) {  // bounded: 64 KiB per round
    char chunk[65536];
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - stream.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&stream);
  return out;
}

// Tests the Accept negotiation table, including Prometheus 2 and 3 default headers.
TEST(ExpositionNegotiationTest, AcceptTable) {
  const auto check = [](std::string_view accept, ExpositionFormat want) {
    EXPECT_EQ(negotiate_format(accept), want) << "Accept: " << accept;
  };
  check("", kTextResponse);
  check("*/*", kTextResponse);
  check("text/plain", kTextResponse);
  check("text/plain;version=0.0.4", kTextResponse);
  check("application/openmetrics-text", kOmResponse);
  check("application/openmetrics-text; version=1.0.0; charset=utf-8", kOmResponse);
  check("APPLICATION/OpenMetrics-Text;Version=1.0.0", kOmResponse);
  check("application/openmetrics-text;version=0.0.1", kTextResponse);  // unsupported version -> default
  check("application/json", kTextResponse);
  check("garbage;;;,,", kTextResponse);
  check("text/plain;q=0.5,application/openmetrics-text;q=0.9", kOmResponse);
  check("application/openmetrics-text;q=0.2,text/plain;q=0.3", kTextResponse);
  check("application/openmetrics-text;q=0,text/plain;q=0.1", kTextResponse);
  check("application/openmetrics-text;q=0", kTextResponse);
  check("application/openmetrics-text;q=abc", kTextResponse);  // unparsable q: part skipped
  check("application/openmetrics-text;q=0.5,text/plain;q=0.5", kOmResponse);  // tie: first listed
  // Prometheus 3 default scrape Accept (reference §3).
  check("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
        "application/openmetrics-text;version=0.0.1;q=0.4,"
        "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,"
        "text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
        kOmResponse);
  // Prometheus 2.42 default Accept.
  check("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
        "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
        kOmResponse);
  // Native-histogram Prometheus prefers protobuf, which inferscope does not write.
  check("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,"
        "text/plain;version=0.0.4;q=0.3",
        kTextResponse);
}

// Tests Accept-Encoding handling, including q=0.
TEST(ExpositionNegotiationTest, AcceptEncodingTable) {
  const auto check = [](std::string_view header, bool want) {
    EXPECT_EQ(accepts_gzip(header), want) << "Accept-Encoding: " << header;
  };
  check("", false);
  check("gzip", true);
  check("GZIP", true);
  check("x-gzip", true);
  check("deflate, gzip;q=1.0, *;q=0.5", true);
  check("gzip;q=0", false);
  check("gzip; q=0.0", false);
  check("*", true);
  check("*;q=0", false);
  check("gzip;q=0, *", false);  // explicit refusal beats the wildcard
  check("identity", false);
  check("br, zstd", false);
}

// Tests the exact Content-Type strings.
TEST(ExpositionNegotiationTest, ContentTypes) {
  EXPECT_EQ(content_type(kTextResponse), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(content_type(kOmResponse), "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

// Tests that gzip_compress output inflates back to the input, for empty and large inputs.
TEST(ExpositionNegotiationTest, GzipRoundTrip) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "metric_" + std::to_string(i * 7919 % 1000) + " 1\n";
  for (const std::string& input : {std::string(), std::string("x"), big}) {
    const std::string compressed = gzip_compress(input);
    ASSERT_GE(compressed.size(), 18u);  // gzip header + trailer
    EXPECT_EQ(static_cast<unsigned char>(compressed[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(compressed[1]), 0x8b);
    EXPECT_TRUE(gunzip(compressed) == input) << "round trip differs for input of " << input.size() << " bytes";
  }
  EXPECT_LT(gzip_compress(big).size(), big.size() / 4);
}

// Tests render_scrape end to end: format, content type and compression follow the headers.
TEST(ExpositionNegotiationTest, RenderScrape) {
  Registry registry;
  registry.counter({.name = "c_total", .help = "h"}).with({}).inc();
  const ScrapeResponse plain = render_scrape(registry, "", "");
  EXPECT_FALSE(plain.gzipped);
  EXPECT_EQ(plain.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(plain.body.find("c_total 1\n"), std::string::npos);
  const ScrapeResponse om = render_scrape(registry, "application/openmetrics-text", "gzip");
  EXPECT_TRUE(om.gzipped);
  EXPECT_EQ(om.content_type, "application/openmetrics-text; version=1.0.0; charset=utf-8");
  const std::string body = gunzip(om.body);
  EXPECT_NE(body.find("# TYPE c counter\nc_total 1\n"), std::string::npos) << body;
  EXPECT_TRUE(body.ends_with("# EOF\n"));
  EXPECT_FALSE(render_scrape(registry, "", "gzip;q=0").gzipped);
}

}  // namespace
}  // namespace inferscope::metrics
