#!/usr/bin/env node
// A real OTLP/HTTP protobuf peer for the trace tests: an HTTP server on an ephemeral loopback port
// that decodes every POST /v1/traces with the OpenTelemetry protobuf definitions from npm
// (@opentelemetry/otlp-transformer 0.52.1, build/src/generated/root.js: protobufjs 7) and prints
// one JSON line per span, ids in hex, times and int64 values as decimal strings. (0.52.1's schema
// predates Span.flags, field 16: it skips that field, so flags are checked by the C++ unit tests.)
// Usage: NODE_PATH=<web node_modules> node otlp_receiver.js [--quiet]
// Prints {"port":N} first; {"span":{...}} per span (--quiet: only {"spans":total} at exit, for
// benchmarks); {"error":"..."} for a body it cannot decode (answered 400). Exits on SIGTERM.
'use strict';
const http = require('http');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');

const proto = root.opentelemetry.proto;
const Request = proto.collector.trace.v1.ExportTraceServiceRequest;
const Response = proto.collector.trace.v1.ExportTraceServiceResponse;

const hex = (bytes) => Buffer.from(bytes || []).toString('hex');
const text = (long) => (long === undefined || long === null ? '0' : long.toString());

function anyValue(v) {
  switch (v.value) {
    case 'stringValue': return v.stringValue;
    case 'boolValue': return v.boolValue;
    case 'intValue': return { int: text(v.intValue) };
    case 'doubleValue': return { double: v.doubleValue };
    case 'arrayValue': return (v.arrayValue.values || []).map(anyValue);
    default: return { unsupported: v.value };
  }
}

function attributes(list) {
  const out = {};
  for (const kv of list || []) out[kv.key] = anyValue(kv.value);
  return out;
}

const quiet = process.argv.includes('--quiet');
let total = 0;

function print(object) {
  process.stdout.write(JSON.stringify(object) + '\n');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    let decoded;
    try {
      if (req.headers['content-type'] !== 'application/x-protobuf') {
        throw new Error('content-type ' + req.headers['content-type']);
      }
      decoded = Request.decode(Buffer.concat(chunks));
    } catch (e) {
      print({ error: String(e.message || e) });
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(String(e.message || e));
      return;
    }
    for (const rs of decoded.resourceSpans || []) {
      const resource = attributes(rs.resource && rs.resource.attributes);
      for (const ss of rs.scopeSpans || []) {
        for (const s of ss.spans || []) {
          total += 1;
          if (quiet) continue;
          print({
            span: {
              resource,
              scope: { name: (ss.scope && ss.scope.name) || '', version: (ss.scope && ss.scope.version) || '' },
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              name: s.name,
              kind: s.kind,
              start: text(s.startTimeUnixNano),
              end: text(s.endTimeUnixNano),
              status: { code: (s.status && s.status.code) || 0, message: (s.status && s.status.message) || '' },
              attributes: attributes(s.attributes),
            },
          });
        }
      }
    }
    res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end(Buffer.from(Response.encode({}).finish()));
  });
});

server.listen(0, '127.0.0.1', () => print({ port: server.address().port }));
process.on('SIGTERM', () => {
  if (quiet) print({ spans: total });
  process.exit(0);
});
