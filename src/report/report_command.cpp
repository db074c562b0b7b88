#include "report/report_command.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "config/stack_config.h"
#include "doctor/doctor_api.h"
#include "relay/report_send.h"

namespace inferscope::report {
namespace {

struct ReportOptions {
  ReportFlags flags;
  std::string format = "markdown";
  std::string output;
  std::string send;    // --send CHANNEL: deliver through this channel of --config
  std::string config;  // --config FILE: up's YAML, whose notifications.channels are used
};

[[noreturn]] void fail(const std::string& message, int code = 3) {
  std::cerr << "inferscope report: " << message << "\n";
  throw CLI::RuntimeError(code);
}

void run(const ReportOptions& o) {
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto request = request_from_flags(o.flags, now);
  if (!request) fail(request.error().message);
  std::optional<config::StackConfig> config;
  if (!o.config.empty()) {
    auto loaded = config::load_stack_config(o.config);
    if (!loaded) fail(loaded.error().message);
    config = std::move(*loaded);
  }
  // The fired alerts come from the relay.db of the `up` that --config describes.
  if (config && o.flags.state_dir.empty()) request->state_dir = config->state_dir.string();
  auto report = build_report(*request);
  if (!report) fail(report.error().message);
  std::string text = o.format == "html"   ? render_html(*report)
                     : o.format == "json" ? render_json(*report)
                                          : render_markdown(*report);
  if (!o.send.empty()) {
    const relay::Document document{report_title(*report), render_markdown(*report), render_html(*report),
                                   render_chat(*report)};
    auto sent = relay::send_report(config->relay, o.config, o.send, document);  // --send needs --config
    if (!sent) fail(sent.error().message);
    std::cout << "report sent to " << o.send << " (" << *sent << " bytes)\n";
    std::cout.flush();
  }
  if (o.output.empty() && !o.send.empty()) {
    // --send without --output: the one line above is the whole of stdout.
  } else if (o.output.empty()) {
    std::cout << text;
    std::cout.flush();
  } else {
    std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) fail("cannot write --output " + o.output);
  }
  if (!report->has_data) {
    std::cerr << "inferscope report: " << (report->notes.empty() ? "no data in the period" : report->notes.front())
              << "\n";
    throw CLI::RuntimeError(2);
  }
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "periodic report over Prometheus: per-model latency, volume, errors, tokens, GPU, alerts, "
                "worst hour with the doctor's findings, hour-of-day profile (last 24 h vs the 24 h before)");
  cmd->add_option("--prometheus", options->flags.prometheus, "Prometheus (or compatible) query API URL")->required();
  cmd->add_option("--ca-file", options->flags.tls.ca_file,
                  "PEM CA certificates to trust for an https:// --prometheus, besides the system store")
      ->check(CLI::ExistingFile);
  cmd->add_flag_callback("--insecure", [options] { options->flags.tls.verify = false; },
                "do not verify the TLS certificate of an https:// --prometheus");
  cmd->add_option("--since", options->flags.since,
                  "period start: RFC 3339, Unix seconds or a duration before --until (default 24h)");
  cmd->add_option("--until", options->flags.until, "period end: RFC 3339 or Unix seconds (default now)");
  cmd->add_option("--selector", options->flags.selector, "label matchers, e.g. '{job=\"vllm\"}'");
  cmd->add_option("--model", options->flags.model, "only this model");
  cmd->add_option("--state-dir", options->flags.state_dir,
                  "state directory of `inferscope up` (its relay.db holds the fired alerts)");
  cmd->add_option("--slo-p95", options->flags.slo_p95,
                  "p95 e2e objective in seconds for the hour-of-day profile (default: 1.5 x the median hourly p95)");
  cmd->add_option("--format", options->format, "markdown, html or json")
      ->check(CLI::IsMember({"markdown", "html", "json"}))
      ->capture_default_str();
  cmd->add_option("--output", options->output, "write the report to this file instead of stdout");
  CLI::Option* config = cmd->add_option("--config", options->config,
                                        "up's YAML config (deploy/inferscope.yaml): its notifications.channels for --send, its "
                                        "state_dir for the fired alerts (unless --state-dir)");
  cmd->add_option("--send", options->send,
                  "deliver the report through this channel of --config (robots: Markdown cut to their limit; "
                  "webhook and email: with the HTML); prints 'report sent to CHANNEL (N bytes)' instead of the report")
      ->needs(config);
  cmd->callback([options] { run(*options); });
}

}  // namespace inferscope::report
