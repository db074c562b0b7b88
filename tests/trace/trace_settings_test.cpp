// Tests of the exported resource built from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES
// (resource_attributes in trace_settings.h), the variables every OpenTelemetry SDK reads.
#include "trace/trace_settings.h"

#include <gtest/gtest.h>

namespace inferscope::trace {
namespace {

std::string string_of(const std::vector<Attribute>& resource, std::string_view key) {
  for (const Attribute& a : resource) {
    if (a.key == key) return std::get<std::string>(a.value);
  }
  return "<absent>";
}

// Tests that with neither variable set the resource is the subcommand's own service.name alone.
TEST(TraceSettingsTest, UnsetEnvironmentNamesTheSubcommand) {
  auto resource = resource_attributes("inferscope-serve", nullptr, nullptr);
  ASSERT_TRUE(resource) << resource.error().message;
  ASSERT_EQ(resource->size(), 1u);
  EXPECT_EQ(string_of(*resource, "service.name"), "inferscope-serve");
  auto empty = resource_attributes("inferscope-serve", "", " ");
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, *resource);
}

// Tests that OTEL_SERVICE_NAME wins over service.name in OTEL_RESOURCE_ATTRIBUTES, which wins
// over the default, as the SDK environment spec orders them.
TEST(TraceSettingsTest, ServiceNamePrecedence) {
  auto from_pairs = resource_attributes("inferscope-gateway", nullptr, "service.name=gw-eu,deployment.environment=prod");
  ASSERT_TRUE(from_pairs) << from_pairs.error().message;
  EXPECT_EQ(string_of(*from_pairs, "service.name"), "gw-eu");
  EXPECT_EQ(string_of(*from_pairs, "deployment.environment"), "prod");
  EXPECT_EQ(from_pairs->size(), 2u);

  auto explicit_name = resource_attributes("inferscope-gateway", "llama-fleet", "service.name=gw-eu");
  ASSERT_TRUE(explicit_name);
  EXPECT_EQ(string_of(*explicit_name, "service.name"), "llama-fleet");
  EXPECT_EQ(explicit_name->size(), 1u);
}

// Tests percent-decoding ('+' stays a plus), trimming around keys and values, and that the last
// of a repeated key wins.
TEST(TraceSettingsTest, DecodesTrimsAndKeepsTheLastRepeat) {
  auto resource = resource_attributes("x", nullptr, " host.name = node%2C1 , k=a+b%3Dc, k=second,empty=");
  ASSERT_TRUE(resource) << resource.error().message;
  EXPECT_EQ(string_of(*resource, "host.name"), "node,1");
  EXPECT_EQ(string_of(*resource, "k"), "second");
  EXPECT_EQ(string_of(*resource, "empty"), "");
  EXPECT_EQ(string_of(*resource, "service.name"), "x");
}

// Tests that a malformed entry is refused naming the variable and the entry's position, never
// its text.
TEST(TraceSettingsTest, MalformedEntryIsAnErrorWithoutItsText) {
  for (const char* bad : {"a=1,secret-token", "a=1,=x", "a=%zz", "a=%4"}) {
    auto resource = resource_attributes("x", nullptr, bad);
    ASSERT_FALSE(resource) << bad;
    const std::string& message = resource.error().message;
    EXPECT_EQ(message.rfind("cannot read OTEL_RESOURCE_ATTRIBUTES: entry ", 0), 0u) << message;
    EXPECT_EQ(message.find("secret"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  EXPECT_NE(resource_attributes("x", nullptr, "a=1,secret-token").error().message.find("entry 2"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::trace
