// File: doctor_routes.h
// Mounts GET /api/doctor on a net::Router (the one `inferscope up` serves): the doctor's JSON
// (or ?format=markdown|text) for ?window=5m&baseline=30m&at=..&selector=..&model=..
// Example: add_doctor_routes(router, [&ctx] { return ctx.prometheus_url(); });
// Thread-safe once registered. A diagnosis blocks for its Prometheus round trips, so it runs on
// the router's blocking lane `lane` (up's "prometheus" lane), never on the server's io threads. 503 until
// `prometheus_url` gives a URL; bad parameters get OpenAI error JSON naming them.
#pragma once

#include <functional>
#include <string>

#include "doctor/doctor_api.h"
#include "net/blocking_client.h"
#include "net/router.h"

namespace inferscope::doctor {

// add_doctor_routes registers GET /api/doctor; `prometheus_url` is asked on each request and
// reached with `tls` when it is https.
// `custom_targets` are the `kind: custom` targets' mappings (doctor_api.h's CustomTargets).
// `traces_url`, asked on each request, is the API base whose trace store gives each finding its
// example traces (up's own; empty: none).
void add_doctor_routes(net::Router& router, std::function<std::string()> prometheus_url,
                       const std::string& lane = "prometheus", net::TlsOptions tls = {},
                       CustomTargets custom_targets = {}, std::function<std::string()> traces_url = {});

}  // namespace inferscope::doctor
