#!/usr/bin/env node
// Sends one small trace through the real OpenTelemetry JS SDK (@opentelemetry/sdk-trace-base
// 1.25.1 + @opentelemetry/exporter-trace-otlp-proto 0.52.1, gzip; or, with `json`,
// @opentelemetry/exporter-trace-otlp-http 0.52.1, which sends OTLP JSON, uncompressed) to an
// OTLP/HTTP endpoint as service SERVICE, then prints what it sent as one JSON line: {"trace_id",
// "spans":[{span_id, parent_span_id, name, kind, start_unix_ns, end_unix_ns, status, attributes}]}
// (times as decimal strings, exact), or {"error": "..."} and exit code 1 when the export failed.
// Usage: NODE_PATH=<web node_modules> node otlp_sdk_sender.js http://127.0.0.1:PORT/v1/traces
//        [protobuf|json] [SERVICE (default sdk-sender)]
'use strict';
const api = require('@opentelemetry/api');
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { Resource } = require('@opentelemetry/resources');

const [url, protocol = 'protobuf', service = 'sdk-sender'] = process.argv.slice(2);
if (!url || !['protobuf', 'json'].includes(protocol)) {
  console.log(JSON.stringify({ error: 'usage: otlp_sdk_sender.js URL [protobuf|json] [SERVICE]' }));
  process.exit(2);
}

const exporter =
  protocol === 'json'
    ? new (require('@opentelemetry/exporter-trace-otlp-http').OTLPTraceExporter)({ url })
    : new (require('@opentelemetry/exporter-trace-otlp-proto').OTLPTraceExporter)({ url, compression: 'gzip' });
const provider = new BasicTracerProvider({ resource: new Resource({ 'service.name': service }) });
provider.addSpanProcessor(new BatchSpanProcessor(exporter));
const tracer = provider.getTracer('otlp-sdk-sender', '1.0.0');

// Times as HrTime [seconds, nanoseconds]: exact to the nanosecond, unlike milliseconds as a float.
const base = Math.floor(Date.now() / 1000);
const at = (ms, extraNs = 0) => [base + Math.floor(ms / 1000), (ms % 1000) * 1e6 + extraNs];

const spans = [];
const root = tracer.startSpan('chat sdk-model', {
  kind: api.SpanKind.SERVER,
  startTime: at(0, 123),
  attributes: {
    'gen_ai.request.model': 'sdk-model',
    'gen_ai.usage.output_tokens': 42,
    'gen_ai.latency.e2e': 0.875,
    'inferscope.streamed': true,
    'gen_ai.response.finish_reasons': ['stop', 'length'],
  },
});
spans.push(root);
const ctx = api.trace.setSpan(api.context.active(), root);
const queue = tracer.startSpan('queue', { startTime: at(0, 123), attributes: { 'inferscope.stage': 'queue' } }, ctx);
queue.end(at(125, 7));
spans.push(queue);
const decode = tracer.startSpan('decode', { startTime: at(125, 7), attributes: { 'inferscope.stage': 'decode' } }, ctx);
const decodeCtx = api.trace.setSpan(ctx, decode);
const lookup = tracer.startSpan('lookup', { kind: api.SpanKind.CLIENT, startTime: at(200), attributes: { retries: 0 } }, decodeCtx);
lookup.setStatus({ code: api.SpanStatusCode.ERROR, message: 'cache miss' });
lookup.end(at(230));
spans.push(lookup);
decode.end(at(875, 1));
spans.push(decode);
root.setStatus({ code: api.SpanStatusCode.OK });
root.end(at(875, 1));

const ns = (hr) => (BigInt(hr[0]) * 1000000000n + BigInt(hr[1])).toString();
const kinds = ['internal', 'server', 'client', 'producer', 'consumer'];
const statuses = ['unset', 'ok', 'error'];
const sent = spans.map((s) => ({
  span_id: s.spanContext().spanId,
  parent_span_id: s.parentSpanId || '',
  name: s.name,
  kind: kinds[s.kind],
  start_unix_ns: ns(s.startTime),
  end_unix_ns: ns(s.endTime),
  status: statuses[s.status.code],
  attributes: s.attributes,
}));

provider.forceFlush().then(
  () => provider.shutdown(),
).then(
  () => console.log(JSON.stringify({ trace_id: root.spanContext().traceId, spans: sent })),
  (err) => {
    console.log(JSON.stringify({ error: String(err && err.message ? err.message : err) }));
    process.exit(1);
  },
);
