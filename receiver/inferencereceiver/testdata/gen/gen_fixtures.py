#!/usr/bin/python3
"""Writes the /metrics fixtures of the inference receiver's tests.

vLLM, SGLang and NIM expose their metrics with prometheus_client, so their
fixtures are produced by prometheus_client itself (Debian's
python3-prometheus-client), with the metric names, help texts, label names
and default buckets of the servers' own collectors, filled by a seeded
simulation of requests. Triton (prometheus-cpp) and TGI
(metrics-exporter-prometheus, Rust) are written in those libraries' text
layout.

Run from this directory: /usr/bin/python3 gen_fixtures.py
"""

import glob
import math
import os
import random
import subprocess
import sys
import tempfile
import time

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

OUT = ".."

# Every series is created at a fixed time so the fixtures (and the _created
# samples the receiver turns into start times) are reproducible.
T_START = 1767225600.0  # 2026-01-01T00:00:00Z
_now = [T_START]
time.time = lambda: _now[0]

TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
                7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                10.0, 20.0, 40.0, 80.0]
LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
                   120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0]


def build_1_2_5(max_value):
    out, exp = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if v > max_value:
                return out
            out.append(v)
        exp += 1


def lognormal(rng, median, sigma):
    return math.exp(rng.gauss(math.log(median), sigma))


class Request:
    def __init__(self, rng, slow=1.0):
        self.prompt = max(1, int(lognormal(rng, 900, 0.8)))
        self.gen = max(1, int(lognormal(rng, 220, 0.7)))
        self.queue = max(0.0, lognormal(rng, 0.05, 1.2) * slow)
        self.ttft = self.queue + lognormal(rng, 0.12, 0.6) * slow
        self.steps = [lognormal(rng, 0.018, 0.25) * slow for _ in range(self.gen - 1)]
        self.decode = sum(self.steps)
        self.e2e = self.ttft + self.decode
        self.tpot = self.decode / (self.gen - 1) if self.gen > 1 else 0.0
        self.cached = int(self.prompt * rng.choice([0.0, 0.0, 0.25, 0.5, 0.9]))
        self.reason = rng.choices(["stop", "length", "abort"], weights=[80, 17, 3])[0]


def python_and_process(reg):
    """The runtime metrics prometheus_client adds; the receiver ignores them."""
    g = Counter("python_gc_objects_collected", "Objects collected during gc", ["generation"], registry=reg)
    for gen, v in (("0", 18234), ("1", 4721), ("2", 912)):
        g.labels(gen).inc(v)
    Gauge("python_info", "Python platform information", ["implementation", "major", "minor", "patchlevel", "version"],
          registry=reg).labels("CPython", "3", "12", "11", "3.12.11").set(1)
    Gauge("process_resident_memory_bytes", "Resident memory size in bytes.", registry=reg).set(4.1263783936e+09)
    Gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
          registry=reg).set(T_START - 95.2)
    Counter("process_cpu_seconds", "Total user and system CPU time spent in seconds.", registry=reg).inc(812.34)


def http_metrics(reg, n):
    c = Counter("http_requests", "Total number of requests by method, status and handler.",
                ["handler", "method", "status"], registry=reg)
    c.labels("/v1/chat/completions", "POST", "2xx").inc(n)
    c.labels("/metrics", "GET", "2xx").inc(240)
    c.labels("/health", "GET", "2xx").inc(480)
    h = Histogram("http_request_duration_seconds", "Latency with only few buckets by handler.",
                  ["handler", "method"], buckets=[0.1, 0.5, 1.0], registry=reg)
    for _ in range(5):
        h.labels("/metrics", "GET").observe(0.004)


class VLLM:
    """vllm/v1/metrics/loggers.py PrometheusStatLogger (0.11 names), plus the
    deprecated 0.10 names when show_hidden is set."""

    def __init__(self, reg, model, engines, show_hidden=False, buckets=None, prefix="vllm:", exemplars=None):
        b = buckets or {}
        # exemplars, when set, is the random.Random that draws each
        # request's trace and span ids (a server instrumented with
        # OpenTelemetry passing them to observe); its own generator, so
        # the requests and the metric values are those of the page
        # without exemplars.
        self.exemplars = exemplars
        self.clock = T_START + 60
        p = prefix
        labels = ["model_name", "engine"]
        self.model, self.engines, self.show_hidden = model, engines, show_hidden
        self.running = Gauge(p + "num_requests_running", "Number of requests in model execution batches.",
                             labels, registry=reg)
        self.waiting = Gauge(p + "num_requests_waiting", "Number of requests waiting to be processed.",
                             labels, registry=reg)
        self.kv = Gauge(p + "kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels, registry=reg)
        self.queries = Counter(p + "prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
                               labels, registry=reg)
        self.hits = Counter(p + "prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
                            labels, registry=reg)
        if show_hidden:
            self.gpu_kv = Gauge(p + "gpu_cache_usage_perc",
                                "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
                                labels, registry=reg)
            self.gpu_queries = Counter(p + "gpu_prefix_cache_queries",
                                       "GPU prefix cache queries, in terms of number of queriedtokens. DEPRECATED: Use vllm:prefix_cache_queries instead.",
                                       labels, registry=reg)
            self.gpu_hits = Counter(p + "gpu_prefix_cache_hits",
                                    "GPU prefix cache hits, in terms of number of cached tokens. DEPRECATED: Use vllm:prefix_cache_hits instead.",
                                    labels, registry=reg)
            self.old_tpot = Histogram(p + "time_per_output_token_seconds",
                                      "Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.",
                                      labels, buckets=b.get("inter_token_latency", TPOT_BUCKETS), registry=reg)
        self.preempt = Counter(p + "num_preemptions", "Cumulative number of preemption from the engine.", labels, registry=reg)
        self.prompt = Counter(p + "prompt_tokens", "Number of prefill tokens processed.", labels, registry=reg)
        self.generation = Counter(p + "generation_tokens", "Number of generation tokens processed.", labels, registry=reg)
        self.success = Counter(p + "request_success", "Count of successfully processed requests.",
                               labels + ["finished_reason"], registry=reg)
        self.req_prompt = Histogram(p + "request_prompt_tokens", "Number of prefill tokens processed.", labels,
                                    buckets=build_1_2_5(131072), registry=reg)
        self.req_gen = Histogram(p + "request_generation_tokens", "Number of generation tokens processed.", labels,
                                 buckets=build_1_2_5(131072), registry=reg)
        self.iter_tokens = Histogram(p + "iteration_tokens_total", "Histogram of number of tokens per engine_step.", labels,
                                     buckets=[1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384], registry=reg)
        self.ttft = Histogram(p + "time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels,
                              buckets=b.get("time_to_first_token", TTFT_BUCKETS), registry=reg)
        self.itl = Histogram(p + "inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels,
                             buckets=b.get("inter_token_latency", TPOT_BUCKETS), registry=reg)
        self.tpot = Histogram(p + "request_time_per_output_token_seconds",
                              "Histogram of time_per_output_token_seconds per request.", labels,
                              buckets=b.get("inter_token_latency", TPOT_BUCKETS), registry=reg)
        lat = b.get("request_latency", LATENCY_BUCKETS)
        self.e2e = Histogram(p + "e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", labels,
                             buckets=lat, registry=reg)
        self.queue = Histogram(p + "request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
                               labels, buckets=lat, registry=reg)
        self.prefill = Histogram(p + "request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
                                 labels, buckets=lat, registry=reg)
        self.info = Gauge(p + "cache_config_info", "Information of the LLMEngine CacheConfig",
                          ["block_size", "cache_dtype", "enable_prefix_caching", "gpu_memory_utilization", "num_gpu_blocks",
                           "engine"], registry=reg)
        for e in engines:
            self.add_engine(e)

    def add_engine(self, e):
        """Creates an engine's children (and so its _created samples) now,
        as make_per_engine does when the engine starts."""
        model = self.model
        self.info.labels("16", "auto", "True", "0.9", "27615", e).set(1)
        for m in (self.running, self.waiting, self.kv, self.queries, self.hits, self.preempt, self.prompt,
                  self.generation, self.req_prompt, self.req_gen, self.iter_tokens, self.ttft, self.itl, self.tpot,
                  self.e2e, self.queue, self.prefill):
            m.labels(model, e)
        for r in ("stop", "length", "abort", "error"):
            self.success.labels(model, e, r)
        if self.show_hidden:
            for m in (self.gpu_kv, self.gpu_queries, self.gpu_hits, self.old_tpot):
                m.labels(model, e)

    def serve(self, e, reqs, preemptions, running, waiting, kv):
        L = (self.model, e)
        for r in reqs:
            ex = None
            if self.exemplars:
                ex = {"trace_id": "%032x" % self.exemplars.getrandbits(128),
                      "span_id": "%016x" % self.exemplars.getrandbits(64)}
                # The exemplar's timestamp is time.time() when observed.
                self.clock = round(self.clock + 0.137, 3)
                saved, _now[0] = _now[0], self.clock
            self.prompt.labels(*L).inc(r.prompt)
            self.generation.labels(*L).inc(r.gen)
            self.queries.labels(*L).inc(r.prompt)
            self.hits.labels(*L).inc(r.cached)
            self.success.labels(*L, r.reason).inc()
            self.req_prompt.labels(*L).observe(r.prompt)
            self.req_gen.labels(*L).observe(r.gen)
            self.ttft.labels(*L).observe(r.ttft, ex)
            for s in r.steps:
                self.itl.labels(*L).observe(s, ex)
            if r.gen > 1:
                self.tpot.labels(*L).observe(r.tpot, ex)
            self.e2e.labels(*L).observe(r.e2e, ex)
            self.queue.labels(*L).observe(r.queue, ex)
            self.prefill.labels(*L).observe(r.ttft - r.queue)
            self.iter_tokens.labels(*L).observe(min(16384, r.prompt))
            if self.show_hidden:
                self.gpu_queries.labels(*L).inc(r.prompt)
                self.gpu_hits.labels(*L).inc(r.cached)
                for s in r.steps:
                    self.old_tpot.labels(*L).observe(s)
            if ex:
                _now[0] = saved
        self.preempt.labels(*L).inc(preemptions)
        self.running.labels(*L).set(running)
        self.waiting.labels(*L).set(waiting)
        self.kv.labels(*L).set(kv)
        if self.show_hidden:
            self.gpu_kv.labels(*L).set(kv)


def write(name, reg):
    text = generate_latest(reg).decode()
    with open(f"{OUT}/{name}", "w") as f:
        f.write(text)
    print(f"{name}: {len(text.splitlines())} lines")


def write_openmetrics(name, reg):
    from prometheus_client.openmetrics.exposition import generate_latest as om_latest
    text = om_latest(reg).decode()
    with open(f"{OUT}/{name}", "w") as f:
        f.write(text)
    print(f"{name}: {len(text.splitlines())} lines")


def vllm_v1():
    """vLLM 0.11, two data-parallel engines; a later scrape; and a scrape after
    engine 1 restarted (its children created again, counting from zero)."""
    model = "meta-llama/Llama-3.1-8B-Instruct"
    rng = random.Random(11)
    e0 = [[Request(rng) for _ in range(n)] for n in (212, 31, 15)]
    e1 = [[Request(rng) for _ in range(n)] for n in (200, 27)]
    e1_after_restart = [Request(rng) for _ in range(9)]

    reg = CollectorRegistry()
    python_and_process(reg)
    http_metrics(reg, 412)
    v = VLLM(reg, model, ["0", "1"])
    _now[0] = T_START + 120
    v.serve("0", e0[0], 3, 14, 3, 0.4123)
    v.serve("1", e1[0], 1, 12, 0, 0.3871)
    write("vllm_v1.txt", reg)
    v.serve("0", e0[1], 0, 16, 5, 0.4478)
    v.serve("1", e1[1], 2, 11, 1, 0.3709)
    write("vllm_v1_later.txt", reg)

    reg = CollectorRegistry()
    python_and_process(reg)
    http_metrics(reg, 470)
    _now[0] = T_START
    v = VLLM(reg, model, ["0"])
    v.serve("0", e0[0] + e0[1] + e0[2], 4, 15, 2, 0.4302)
    _now[0] = T_START + 150
    v.add_engine("1")
    v.serve("1", e1_after_restart, 0, 4, 0, 0.0912)
    write("vllm_v1_engine1_restarted.txt", reg)


def vllm_v1_openmetrics():
    """CONSTRUCTED: vllm_v1.txt's two scrapes (the same requests and
    values) as prometheus_client's OpenMetrics exposition, which it serves
    to an Accept naming application/openmetrics-text, with exemplars
    (trace_id, span_id) on the latency histograms' buckets. vLLM itself
    passes no exemplars to observe(); a server that does is written
    exactly like this."""
    model = "meta-llama/Llama-3.1-8B-Instruct"
    rng = random.Random(11)
    e0 = [[Request(rng) for _ in range(n)] for n in (212, 31, 15)]
    e1 = [[Request(rng) for _ in range(n)] for n in (200, 27)]

    _now[0] = T_START
    reg = CollectorRegistry()
    python_and_process(reg)
    http_metrics(reg, 412)
    v = VLLM(reg, model, ["0", "1"], exemplars=random.Random(19))
    _now[0] = T_START + 120
    v.serve("0", e0[0], 3, 14, 3, 0.4123)
    v.serve("1", e1[0], 1, 12, 0, 0.3871)
    write_openmetrics("vllm_v1_openmetrics.txt", reg)
    v.serve("0", e0[1], 0, 16, 5, 0.4478)
    v.serve("1", e1[1], 2, 11, 1, 0.3709)
    write_openmetrics("vllm_v1_later_openmetrics.txt", reg)


def vllm_mix():
    """vLLM 0.11 run with --show-hidden-metrics-for-version=0.10: the
    deprecated V0-era names beside the V1 ones."""
    _now[0] = T_START
    rng = random.Random(7)
    reg = CollectorRegistry()
    python_and_process(reg)
    v = VLLM(reg, "Qwen/Qwen2.5-7B-Instruct", ["0"], show_hidden=True)
    _now[0] = T_START + 300
    v.serve("0", [Request(rng) for _ in range(96)], 0, 7, 1, 0.2391)
    write("vllm_v0_v1_mix.txt", reg)


def vllm_v0():
    """The V0 engine (vllm/engine/metrics.py, 0.6-0.8): model_name only, no
    engine label, hit-rate gauges, per-step time_per_output_token."""
    _now[0] = T_START
    rng = random.Random(5)
    reg = CollectorRegistry()
    python_and_process(reg)
    model = "mistralai/Mistral-7B-Instruct-v0.3"
    L = ["model_name"]
    running = Gauge("vllm:num_requests_running", "Number of requests currently running on GPU.", L, registry=reg)
    swapped = Gauge("vllm:num_requests_swapped", "Number of requests swapped to CPU.", L, registry=reg)
    waiting = Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", L, registry=reg)
    gpu_kv = Gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", L, registry=reg)
    cpu_kv = Gauge("vllm:cpu_cache_usage_perc", "CPU KV-cache usage. 1 means 100 percent usage.", L, registry=reg)
    gpu_hit = Gauge("vllm:gpu_prefix_cache_hit_rate", "GPU prefix cache block hit rate.", L, registry=reg)
    cpu_hit = Gauge("vllm:cpu_prefix_cache_hit_rate", "CPU prefix cache block hit rate.", L, registry=reg)
    preempt = Counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", L, registry=reg)
    prompt = Counter("vllm:prompt_tokens", "Number of prefill tokens processed.", L, registry=reg)
    gen = Counter("vllm:generation_tokens", "Number of generation tokens processed.", L, registry=reg)
    success = Counter("vllm:request_success", "Count of successfully processed requests.", L + ["finished_reason"], registry=reg)
    ttft = Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", L,
                     buckets=[0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0],
                     registry=reg)
    tpot = Histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", L,
                     buckets=[0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5], registry=reg)
    e2e = Histogram("vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", L,
                    buckets=[1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0], registry=reg)
    queue = Histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", L,
                      buckets=[1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0], registry=reg)
    for m in (running, swapped, waiting, gpu_kv, cpu_kv, gpu_hit, cpu_hit, preempt, prompt, gen, ttft, tpot, e2e, queue):
        m.labels(model)
    for r in ("stop", "length"):
        success.labels(model, r)
    _now[0] = T_START + 60
    for r in [Request(rng) for _ in range(57)]:
        prompt.labels(model).inc(r.prompt)
        gen.labels(model).inc(r.gen)
        success.labels(model, r.reason if r.reason != "abort" else "stop").inc()
        ttft.labels(model).observe(r.ttft)
        for s in r.steps:
            tpot.labels(model).observe(s)
        e2e.labels(model).observe(r.e2e)
        queue.labels(model).observe(r.queue)
    running.labels(model).set(9)
    waiting.labels(model).set(2)
    gpu_kv.labels(model).set(0.6204)
    gpu_hit.labels(model).set(0.3125)
    preempt.labels(model).inc(4)
    write("vllm_v0.txt", reg)


def vllm_custom_buckets():
    """--custom-histogram-buckets: coarse TTFT, fine latency buckets."""
    _now[0] = T_START
    rng = random.Random(3)
    reg = CollectorRegistry()
    v = VLLM(reg, "granite-3.3-8b", ["0"], buckets={
        "time_to_first_token": [0.05, 0.1, 0.2, 0.35, 0.5, 1.0, 3.0],
        "inter_token_latency": [0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1],
        "request_latency": [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
    })
    _now[0] = T_START + 45
    v.serve("0", [Request(rng) for _ in range(64)], 0, 5, 0, 0.1822)
    write("vllm_custom_buckets.txt", reg)


def sglang():
    """SGLang with --enable-metrics, dp-size 2: scheduler gauges per dp rank,
    tokenizer counters and histograms per model."""
    _now[0] = T_START
    rng = random.Random(23)
    reg = CollectorRegistry()
    python_and_process(reg)
    model = "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B"
    sched = ["model_name", "engine_type", "tp_rank", "pp_rank", "dp_rank", "moe_ep_rank"]
    running = Gauge("sglang:num_running_reqs", "The number of running requests.", sched, registry=reg)
    used = Gauge("sglang:num_used_tokens", "The number of used tokens.", sched, registry=reg)
    usage = Gauge("sglang:token_usage", "The token usage.", sched, registry=reg)
    thr = Gauge("sglang:gen_throughput", "The generation throughput (token/s).", sched, registry=reg)
    queue = Gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", sched, registry=reg)
    hit = Gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", sched, registry=reg)
    maxtok = Gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", sched,
                   registry=reg)
    qtime = Histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", sched,
                      buckets=[0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300,
                               400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000], registry=reg)
    tl = ["model_name"]
    prompt = Counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", tl, registry=reg)
    gen = Counter("sglang:generation_tokens_total", "Number of generation tokens processed.", tl, registry=reg)
    cached = Counter("sglang:cached_tokens_total", "Number of cached prompt tokens.", tl, registry=reg)
    nreq = Counter("sglang:num_requests_total", "Number of requests processed.", tl, registry=reg)
    aborted = Counter("sglang:num_aborted_requests_total", "Number of requests aborted.", tl, registry=reg)
    ttft = Histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", tl,
                     buckets=[0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400], registry=reg)
    itl = Histogram("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tl,
                    buckets=[0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080,
                             0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000], registry=reg)
    e2e = Histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", tl,
                    buckets=[0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800,
                             2400], registry=reg)
    _now[0] = T_START + 200
    for dp, (r, w, u, h) in enumerate([(21, 4, 0.7421, 0.4812), (18, 0, 0.6633, 0.5107)]):
        L = (model, "unified", "0", "0", str(dp), "0")
        running.labels(*L).set(r)
        queue.labels(*L).set(w)
        usage.labels(*L).set(u)
        hit.labels(*L).set(h)
        maxtok.labels(*L).set(482133)
        used.labels(*L).set(int(482133 * u))
        thr.labels(*L).set(1873.4 - dp * 120)
        for _ in range(60 + dp * 7):
            qtime.labels(*L).observe(lognormal(rng, 0.08, 1.3))
    for r in [Request(rng, slow=1.8) for _ in range(133)]:
        prompt.labels(model).inc(r.prompt)
        gen.labels(model).inc(r.gen)
        if r.cached:
            cached.labels(model).inc(r.cached)
        nreq.labels(model).inc()
        ttft.labels(model).observe(r.ttft)
        for s in r.steps:
            itl.labels(model).observe(s)
        e2e.labels(model).observe(r.e2e)
    aborted.labels(model).inc(2)
    write("sglang.txt", reg)
    # The same registry as prometheus_client serves it to an OpenMetrics
    # Accept (SGLang passes no exemplars).
    write_openmetrics("sglang_openmetrics.txt", reg)


def sglang_legacy():
    """SGLang before its metric renames (python/sglang/srt/metrics/
    metrics_collector.py, up to 0.3): one series per family labelled
    name=<model>, no ranks, cache_hit_rate in percent, and new_token /
    cached_token gauges of the last prefill batch. That version served its
    registry from prometheus_client's multiprocess mode (its gauges declare
    multiprocess_mode), as its documented sample shows: no _created series,
    no runtime metrics, labels sorted (le before name). prometheus_client
    picks that mode when it is imported, so the page is written by a child
    process started with PROMETHEUS_MULTIPROC_DIR set."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PROMETHEUS_MULTIPROC_DIR=d)
        subprocess.run([sys.executable, os.path.abspath(__file__), "sglang_legacy_child"], env=env, check=True)


def _sglang_legacy_child():
    from prometheus_client import multiprocess

    rng = random.Random(31)
    model = "Qwen/Qwen2-7B-Instruct"
    max_model_len = 32768
    L = ["name"]

    def gauge(name, help_, value, mode="sum"):
        Gauge(name, help_, L, multiprocess_mode=mode).labels(model).set(value)

    gauge("sglang:max_total_num_tokens", "Maximum total number of tokens", 161721, "min")
    gauge("sglang:max_prefill_tokens", "Maximum prefill tokens", 16384, "min")
    gauge("sglang:max_running_requests", "Maximum running requests", 4097, "min")
    gauge("sglang:context_len", "Context length", max_model_len, "min")
    gauge("sglang:num_requests_running", "Number of requests currently running on GPU", 12)
    gauge("sglang:num_requests_waiting", "Number of requests waiting to be processed.", 3)
    gauge("sglang:gen_throughput", "Gen token throughput (token/s)", 812.5)
    gauge("sglang:token_usage", "Total token usage", 0.42)
    gauge("sglang:new_seq", "Number of new sequences", 2)
    gauge("sglang:new_token", "Number of new token", 1536)
    gauge("sglang:cached_token", "Number of cached token", 512)
    gauge("sglang:cache_hit_rate", "Cache hit rate", 10.61)
    gauge("sglang:queue_req", "Number of queued requests", 4)

    prompt = Counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", L)
    gen = Counter("sglang:generation_tokens_total", "Number of generation tokens processed.", L)
    ttft = Histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", L,
                     buckets=[0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                              10.0, 15.0, 20.0, 25.0, 30.0])
    tpot = Histogram("sglang:time_per_output_token_seconds", "Histogram of time per output token in seconds.", L,
                     buckets=[0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
                              0.75, 1.0, 2.5])
    req_prompt = Histogram("sglang:request_prompt_tokens", "Number of prefill tokens processed", L,
                           buckets=build_1_2_5(max_model_len))
    req_gen = Histogram("sglang:request_generation_tokens", "Number of generation tokens processed.", L,
                        buckets=build_1_2_5(max_model_len))
    # Declared with finished_reason but never incremented by that version,
    # so the page has nothing of it.
    Counter("sglang:request_success_total", "Count of successfully processed requests.", L + ["finished_reason"])
    e2e = Histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", L,
                    buckets=build_1_2_5(max_model_len))
    waiting = Histogram("sglang:waiting_request_latency_seconds", "Histogram of request waiting time in seconds", L,
                        buckets=build_1_2_5(max_model_len))
    decode = Histogram("sglang:decode_request_latency_seconds", "Histogram of request decoding time in seconds", L,
                       buckets=build_1_2_5(max_model_len))
    for r in [Request(rng) for _ in range(48)]:
        prompt.labels(model).inc(r.prompt)
        gen.labels(model).inc(r.gen)
        ttft.labels(model).observe(r.ttft)
        for step in r.steps:
            tpot.labels(model).observe(step)
        req_prompt.labels(model).observe(r.prompt)
        req_gen.labels(model).observe(r.gen)
        e2e.labels(model).observe(r.e2e)
        waiting.labels(model).observe(r.queue)
        decode.labels(model).observe(r.decode)

    # MultiProcessCollector reads the value files in directory order; merge
    # them in name order instead, so the page is the same on every run.
    files = sorted(glob.glob(os.path.join(os.environ["PROMETHEUS_MULTIPROC_DIR"], "*.db")))

    class SortedMultiProcess:
        def collect(self):
            return multiprocess.MultiProcessCollector.merge(files, accumulate=True)

    reg = CollectorRegistry()
    reg.register(SortedMultiProcess())
    write("sglang_legacy.txt", reg)


def nim():
    """NIM for LLMs (/v1/metrics): vLLM's names without the prefix."""
    _now[0] = T_START
    rng = random.Random(31)
    reg = CollectorRegistry()
    python_and_process(reg)
    model = "meta/llama-3.1-70b-instruct"
    L = ["model_name"]
    Gauge("num_request_max", "Max number of concurrently running requests.", L, registry=reg).labels(model).set(256)
    running = Gauge("num_requests_running", "Number of requests currently running on GPU.", L, registry=reg)
    waiting = Gauge("num_requests_waiting", "Number of requests waiting.", L, registry=reg)
    kv = Gauge("gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", L, registry=reg)
    prompt = Counter("prompt_tokens", "Number of prefill tokens processed.", L, registry=reg)
    gen = Counter("generation_tokens", "Number of generation tokens processed.", L, registry=reg)
    success = Counter("request_success", "Count of successfully processed requests.", L + ["finished_reason"], registry=reg)
    ttft = Histogram("time_to_first_token_seconds", "Histogram of time to first token in seconds.", L,
                     buckets=TTFT_BUCKETS[:16], registry=reg)
    tpot = Histogram("time_per_output_token_seconds", "Histogram of time per output token in seconds.", L,
                     buckets=TPOT_BUCKETS[:13], registry=reg)
    e2e = Histogram("e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", L,
                    buckets=[1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0], registry=reg)
    rp = Histogram("request_prompt_tokens", "Number of prefill tokens processed.", L, buckets=build_1_2_5(131072), registry=reg)
    rg = Histogram("request_generation_tokens", "Number of generation tokens processed.", L, buckets=build_1_2_5(131072),
                   registry=reg)
    for m in (running, waiting, kv, prompt, gen, ttft, tpot, e2e, rp, rg):
        m.labels(model)
    _now[0] = T_START + 75
    for r in [Request(rng, slow=2.5) for _ in range(48)]:
        prompt.labels(model).inc(r.prompt)
        gen.labels(model).inc(r.gen)
        success.labels(model, r.reason).inc()
        ttft.labels(model).observe(r.ttft)
        if r.gen > 1:
            tpot.labels(model).observe(r.tpot)
        e2e.labels(model).observe(r.e2e)
        rp.labels(model).observe(r.prompt)
        rg.labels(model).observe(r.gen)
    running.labels(model).set(6)
    waiting.labels(model).set(0)
    kv.labels(model).set(0.0833)
    write("nim.txt", reg)


def cpp_number(v):
    """prometheus-cpp writes doubles with %.17g and trims nothing; integral
    values print without a fraction."""
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def triton():
    """Triton 24.x, /metrics on :8002, prometheus-cpp text; two models, one
    with two versions; histogram_latencies=true for the first response."""
    rng = random.Random(41)
    out = []
    models = [("ensemble_llama3", "1"), ("tensorrt_llm", "1"), ("tensorrt_llm", "2")]
    stats = {}
    for m in models:
        n = {"ensemble_llama3": 140, "tensorrt_llm": 90}[m[0]] // (2 if m[1] == "2" else 1)
        fails = {"REJECTED": 0, "CANCELED": 0, "BACKEND": 0, "OTHER": 0}
        durs, queues, firsts = [], [], []
        for _ in range(n):
            r = Request(rng)
            durs.append(r.e2e)
            queues.append(r.queue)
            firsts.append(r.ttft)
        fails["BACKEND"] = 1 if m[0] == "tensorrt_llm" and m[1] == "1" else 0
        fails["CANCELED"] = 2 if m[0] == "ensemble_llama3" else 0
        stats[m] = (n, fails, durs, queues, firsts)

    def family(name, help_, typ, lines):
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {typ}")
        out.extend(lines)

    def lbl(m, extra=""):
        return f'model="{m[0]}",version="{m[1]}"' + extra

    family("nv_inference_request_success", "Number of successful inference requests, all batch sizes", "counter",
           [f"nv_inference_request_success{{{lbl(m)}}} {stats[m][0]}" for m in models])
    fl = []
    for m in models:
        for reason, c in stats[m][1].items():
            extra = ',reason="%s"' % reason
            fl.append(f"nv_inference_request_failure{{{lbl(m, extra)}}} {c}")
    family("nv_inference_request_failure", "Number of failed inference requests, all batch sizes", "counter", fl)
    family("nv_inference_count", "Number of inferences performed (does not include cached requests)", "counter",
           [f"nv_inference_count{{{lbl(m)}}} {stats[m][0]}" for m in models])
    family("nv_inference_exec_count", "Number of model executions performed (does not include cached requests)",
           "counter", [f"nv_inference_exec_count{{{lbl(m)}}} {stats[m][0] // 3}" for m in models])
    family("nv_inference_request_duration_us", "Cumulative inference request duration in microseconds (includes cached requests)",
           "counter", [f"nv_inference_request_duration_us{{{lbl(m)}}} {int(sum(stats[m][2]) * 1e6)}" for m in models])
    family("nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds (includes cached requests)",
           "counter", [f"nv_inference_queue_duration_us{{{lbl(m)}}} {int(sum(stats[m][3]) * 1e6)}" for m in models])
    family("nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds (does not include cached requests)",
           "counter", [f"nv_inference_compute_infer_duration_us{{{lbl(m)}}} {int((sum(stats[m][2]) - sum(stats[m][3])) * 1e6)}" for m in models])
    family("nv_inference_pending_request_count", "Instantaneous number of pending requests awaiting execution per-model.",
           "gauge", [f"nv_inference_pending_request_count{{{lbl(m)}}} {p}" for m, p in zip(models, [3, 1, 0])])
    buckets = [100, 500, 2000, 5000]
    hl = []
    for m in models:
        firsts = [f * 1000 for f in stats[m][4]]
        hl.append(f"nv_inference_first_response_histogram_ms_count{{{lbl(m)}}} {len(firsts)}")
        hl.append(f"nv_inference_first_response_histogram_ms_sum{{{lbl(m)}}} {cpp_number(round(sum(firsts), 3))}")
        for b in buckets + ["+Inf"]:
            extra = ',le="%s"' % b
            n = len(firsts) if b == "+Inf" else sum(1 for f in firsts if f <= b)
            hl.append(f"nv_inference_first_response_histogram_ms_bucket{{{lbl(m, extra)}}} {n}")
    family("nv_inference_first_response_histogram_ms", "Duration from request to first response in milliseconds",
           "histogram", hl)
    gpu = 'gpu_uuid="GPU-5fc7a5bb-bd0c-4a1e-9a3e-2c6a9f7c4a11"'
    family("nv_gpu_utilization", "GPU utilization rate [0.0 - 1.0)", "gauge", [f"nv_gpu_utilization{{{gpu}}} 0.87"])
    family("nv_gpu_memory_used_bytes", "GPU used memory, in bytes", "gauge", [f"nv_gpu_memory_used_bytes{{{gpu}}} 71876444160"])
    family("nv_gpu_power_usage", "GPU power usage in watts", "gauge", [f"nv_gpu_power_usage{{{gpu}}} 512.337"])
    family("nv_cpu_utilization", "CPU utilization rate [0.0 - 1.0]", "gauge", ["nv_cpu_utilization 0.184"])
    with open(f"{OUT}/triton.txt", "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"triton.txt: {len(out)} lines")


def tgi():
    """TGI 3.x router /metrics (metrics-exporter-prometheus): TYPE lines, no
    HELP, a blank line between families, histograms with the router's own
    buckets (35 durations from 0.00015 s growing by 1.5; token lengths in
    hundredths of the configured maxima)."""
    rng = random.Random(53)
    reqs = [Request(rng, slow=1.4) for _ in range(77)]
    max_input, max_total = 4095, 4096
    dur = []
    v = 0.0001
    for _ in range(35):
        v *= 1.5
        dur.append(v)
    input_b = [(max_input / 100.0) * (x + 1) for x in range(100)]
    gen_b = [(max_total / 100.0) * (x + 1) for x in range(100)]
    blocks = []

    def counter(name, value, labels=None):
        lines = [f"# TYPE {name} counter"]
        if labels:
            lines += [f'{name}{{{k}}} {v}' for k, v in labels]
        else:
            lines.append(f"{name} {value}")
        blocks.append("\n".join(lines))

    def gauge(name, value):
        blocks.append(f"# TYPE {name} gauge\n{name} {value}")

    def hist(name, values, bounds, labels=""):
        lines = [f"# TYPE {name} histogram"]
        pre = labels + "," if labels else ""
        for b in bounds:
            lines.append(f'{name}_bucket{{{pre}le="{b!r}"}} {sum(1 for x in values if x <= b)}')
        lines.append(f'{name}_bucket{{{pre}le="+Inf"}} {len(values)}')
        lab = "{" + labels + "}" if labels else ""
        lines.append(f"{name}_sum{lab} {sum(values)!r}")
        lines.append(f"{name}_count{lab} {len(values)}")
        blocks.append("\n".join(lines))

    ok = [r for r in reqs if r.reason != "abort"]
    counter("tgi_request_count", len(reqs))
    counter("tgi_request_success", len(ok))
    counter("tgi_request_failure", None, [('err="validation"', 1), ('err="overloaded"', len(reqs) - len(ok) - 1)])
    counter("tgi_batch_inference_count", None, [('method="prefill"', 71), ('method="decode"', 9120)])
    counter("tgi_batch_inference_success", None, [('method="prefill"', 71), ('method="decode"', 9120)])
    gauge("tgi_batch_current_size", 5)
    gauge("tgi_batch_current_max_tokens", 11873)
    gauge("tgi_queue_size", 2)
    hist("tgi_request_duration", [r.e2e for r in ok], dur)
    hist("tgi_request_queue_duration", [r.queue for r in ok], dur)
    hist("tgi_request_validation_duration", [0.0004 for _ in ok], dur)
    hist("tgi_request_inference_duration", [r.e2e - r.queue for r in ok], dur)
    hist("tgi_request_mean_time_per_token_duration", [(r.e2e - r.queue) / r.gen for r in ok], dur)
    hist("tgi_request_input_length", [float(min(r.prompt, max_input)) for r in ok], input_b)
    hist("tgi_request_generated_tokens", [float(r.gen) for r in ok], gen_b)
    with open(f"{OUT}/tgi.txt", "w") as f:
        f.write("\n\n".join(blocks) + "\n\n")
    print("tgi.txt written")


if __name__ == "__main__":
    if sys.argv[1:] == ["sglang_legacy_child"]:
        _sglang_legacy_child()
        sys.exit()
    vllm_v1()
    vllm_v1_openmetrics()
    vllm_mix()
    vllm_v0()
    vllm_custom_buckets()
    sglang()
    sglang_legacy()
    nim()
    triton()
    tgi()
