#!/usr/bin/env bash
# stack.sh: the local audit stack, on loopback only.
#
# Usage: scripts/stack.sh start|stop|status|restart|env
#
#   start    embedded ClickHouse (auditq serve) on 127.0.0.1:8123, then the
#            audit schema (auditq migrate), then Jaeger v2 (query API on
#            127.0.0.1:16686, OTLP on 127.0.0.1:14317/14318), then our
#            collector (OTLP on 127.0.0.1:4317/4318, health 127.0.0.1:13133).
#            Each step waits for a health check. Components already running
#            are left alone, so a second start is a no-op.
#   stop     stops the collector, Jaeger and ClickHouse (in that order);
#            nothing running is not an error.
#   status   one line per component; exit 0 when all are running and healthy,
#            3 otherwise.
#   env      prints the variables a client needs as shell exports: the OTLP
#            endpoint and OTEL_EXPORTER_OTLP_HEADERS with the collector's
#            bearer token, AUDITQ_DSN with the reader's credentials, Jaeger's API
#            (TOOLGATE_JAEGER_QUERY, and AUDITQ_JAEGER_URL for auditq trace's
#            link), the collector's health URL (AUDITQ_COLLECTOR_HEALTH, for
#            auditq doctor).
#
# State lives in .stack/: logs/ (one log per component), run/ (pid files),
# clickhouse/ (data), otelcol/queue/ (the exporter's persistent queue) and
# credentials.env (generated passwords for the ClickHouse users writer and
# reader and the collector's OTLP bearer token, mode 600, kept across
# restarts). The collector runs deploy/otel-collector/config.yaml, the
# production configuration, unchanged. Binaries come from bin/: auditq
# (built here if missing), otelcol-toolgate (scripts/build-collector.sh) and
# jaeger (scripts/build-jaeger.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

STACK="${TOOLGATE_STACK_DIR:-$ROOT/.stack}"
# Absolute, so the collector's queue directory is (config.yaml wants one).
STACK="$(realpath -m "$STACK")"
BIN="$ROOT/bin"
DEPLOY="$ROOT/deploy/otel-collector"
LOGS="$STACK/logs"
RUN="$STACK/run"
CREDS="$STACK/credentials.env"

CH_ADDR="127.0.0.1:8123"
JAEGER_QUERY="127.0.0.1:16686"
JAEGER_QUERY_GRPC="127.0.0.1:16685"
JAEGER_OTLP_GRPC="127.0.0.1:14317"
JAEGER_OTLP_HTTP="127.0.0.1:14318"
JAEGER_HEALTH="127.0.0.1:14133"
OTELCOL_GRPC="127.0.0.1:4317"
OTELCOL_HTTP="127.0.0.1:4318"
OTELCOL_HEALTH="127.0.0.1:13133"
OTELCOL_METRICS_PORT="8888"

say() { echo "stack: $*"; }
die() { echo "stack: error: $*" >&2; exit 1; }

# ---- processes -------------------------------------------------------------

# pid_of NAME: the pid recorded for NAME if that process is alive and is the
# binary we started, else nothing.
pid_of() {
	local f="$RUN/$1.pid" pid exe
	[[ -f "$f" ]] || return 0
	pid="$(cat "$f")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 0
	[[ -d "/proc/$pid" ]] || return 0
	exe="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
	[[ "$exe" == *"$2"* ]] || return 0
	echo "$pid"
}

# port_owner ADDR: a description of the process listening on ADDR, or nothing.
port_owner() {
	local port="${1##*:}"
	ss -Hltnp "sport = :$port" 2>/dev/null | head -1 | sed -n 's/.*users:((\("[^"]*"\),pid=\([0-9]*\).*/\1 (pid \2)/p;t;s/.*/another process/p'
}

# check_ports NAME ADDR...: fail clearly when a port is taken.
check_ports() {
	local name="$1" addr owner
	shift
	for addr in "$@"; do
		owner="$(port_owner "$addr")"
		if [[ -n "$owner" ]]; then
			die "$name cannot start: $addr is already in use by $owner. Stop that process (or 'scripts/stack.sh stop' if it is an old stack) and retry."
		fi
	done
}

# wait_http NAME URL PID SECONDS: wait for URL to answer 200 while PID lives.
wait_http() {
	local name="$1" url="$2" pid="$3" secs="$4" i
	for ((i = 0; i < secs * 10; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "----- last lines of $LOGS/$name.log -----" >&2
			tail -n 20 "$LOGS/$name.log" >&2
			die "$name exited during start-up (log: $LOGS/$name.log)"
		fi
		if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "----- last lines of $LOGS/$name.log -----" >&2
	tail -n 20 "$LOGS/$name.log" >&2
	die "$name did not become healthy at $url within ${secs}s (log: $LOGS/$name.log)"
}

# launch NAME CMD...: start CMD in the background with its own session,
# logging to logs/NAME.log, and record its pid.
launch() {
	local name="$1"
	shift
	mkdir -p "$LOGS" "$RUN"
	echo "==== $(date -u +%FT%TZ) start: $*" >>"$LOGS/$name.log"
	setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$RUN/$name.pid"
}

# halt NAME BINARY SECONDS: SIGTERM, wait, then SIGKILL.
halt() {
	local name="$1" pid i
	pid="$(pid_of "$1" "$2")"
	if [[ -z "$pid" ]]; then
		rm -f "$RUN/$name.pid"
		return 0
	fi
	say "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < $3 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		say "$name did not stop within $3 s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$RUN/$name.pid"
}

need_bin() {
	[[ -x "$1" ]] || die "$1 is missing: run $2 (or 'make deps')"
}

# ---- credentials -------------------------------------------------------------

# secret: 24 random bytes, URL- and header-safe.
secret() { head -c 24 /dev/urandom | base64 | tr -d '/+='; }

credentials() {
	if [[ ! -f "$CREDS" ]]; then
		mkdir -p "$STACK"
		local w r
		w="$(secret)"
		r="$(secret)"
		(
			umask 077
			cat >"$CREDS" <<EOF
# Generated by scripts/stack.sh; ClickHouse users of the local stack.
TOOLGATE_CLICKHOUSE_WRITER_USER=writer
TOOLGATE_CLICKHOUSE_WRITER_PASSWORD=$w
TOOLGATE_CLICKHOUSE_READER_USER=reader
TOOLGATE_CLICKHOUSE_READER_PASSWORD=$r
EOF
		)
		say "generated ClickHouse credentials in ${CREDS#"$ROOT"/}"
	fi
	# shellcheck disable=SC1090
	source "$CREDS"
	if [[ -z "${TOOLGATE_OTLP_TOKEN:-}" ]]; then
		# The bearer token agents present to the collector (a credentials
		# file from before the collector required one gets it added).
		TOOLGATE_OTLP_TOKEN="$(secret)"
		(
			umask 077
			printf '# Bearer token of the collector'"'"'s OTLP receivers (agents: OTEL_EXPORTER_OTLP_HEADERS).\nTOOLGATE_OTLP_TOKEN=%s\n' "$TOOLGATE_OTLP_TOKEN" >>"$CREDS"
		)
		say "generated the collector's OTLP token in ${CREDS#"$ROOT"/}"
	fi
}

# ---- components --------------------------------------------------------------

start_clickhouse() {
	local pid
	pid="$(pid_of clickhouse "$BIN/auditq")"
	if [[ -n "$pid" ]]; then
		say "clickhouse already running (pid $pid)"
	else
		# go build is a no-op (about a second) when bin/auditq is up to date.
		go build -ldflags "-X main.version=$(git describe --tags --always --dirty 2>/dev/null || echo devel)" \
			-o "$BIN/auditq" ./cmd/auditq || die "could not build bin/auditq (go build ./cmd/auditq)"
		local lib="${TOOLGATE_LIBCHDB:-$ROOT/.cache/chdb/libchdb.so}"
		[[ -f "$lib" ]] || die "libchdb.so not found at $lib: run scripts/install-libchdb.sh (or 'make deps')"
		check_ports clickhouse "$CH_ADDR"
		mkdir -p "$STACK/clickhouse" "$STACK/tmp"
		say "starting clickhouse (auditq serve) on $CH_ADDR"
		AUDITQ_SERVE_USERS="$TOOLGATE_CLICKHOUSE_WRITER_USER:$TOOLGATE_CLICKHOUSE_WRITER_PASSWORD:rw,$TOOLGATE_CLICKHOUSE_READER_USER:$TOOLGATE_CLICKHOUSE_READER_PASSWORD:ro" \
			TOOLGATE_LIBCHDB="$lib" \
			launch clickhouse "$BIN/auditq" serve --listen "$CH_ADDR" --data-dir "$STACK/clickhouse" --temp-dir "$STACK/tmp"
		pid="$(cat "$RUN/clickhouse.pid")"
	fi
	wait_http clickhouse "http://$CH_ADDR/ping" "$pid" 60
	say "migrating the audit schema"
	AUDITQ_DSN="http://$TOOLGATE_CLICKHOUSE_WRITER_USER:$TOOLGATE_CLICKHOUSE_WRITER_PASSWORD@$CH_ADDR" \
		"$BIN/auditq" migrate >>"$LOGS/migrate.log" 2>&1 || {
		tail -n 20 "$LOGS/migrate.log" >&2
		if tail -n 20 "$LOGS/migrate.log" | grep -q AUTHENTICATION_FAILED; then
			die "auditq migrate failed: the running ClickHouse refused TOOLGATE_CLICKHOUSE_WRITER_USER/_PASSWORD of ${CREDS#"$ROOT"/} (authentication); they must match the users it was started with: 'scripts/stack.sh restart' restarts it with them"
		fi
		die "auditq migrate failed (log: $LOGS/migrate.log)"
	}
}

start_jaeger() {
	local pid
	pid="$(pid_of jaeger "$BIN/jaeger")"
	if [[ -n "$pid" ]]; then
		say "jaeger already running (pid $pid)"
	else
		need_bin "$BIN/jaeger" scripts/build-jaeger.sh
		check_ports jaeger "$JAEGER_QUERY" "$JAEGER_QUERY_GRPC" "$JAEGER_OTLP_GRPC" "$JAEGER_OTLP_HTTP" "$JAEGER_HEALTH"
		say "starting jaeger (query API http://$JAEGER_QUERY, OTLP $JAEGER_OTLP_GRPC)"
		TOOLGATE_JAEGER_QUERY_HTTP="$JAEGER_QUERY" TOOLGATE_JAEGER_QUERY_GRPC="$JAEGER_QUERY_GRPC" \
			TOOLGATE_JAEGER_OTLP_GRPC="$JAEGER_OTLP_GRPC" TOOLGATE_JAEGER_OTLP_HTTP="$JAEGER_OTLP_HTTP" \
			TOOLGATE_JAEGER_HEALTH="$JAEGER_HEALTH" \
			launch jaeger "$BIN/jaeger" --config "$DEPLOY/jaeger.yaml"
		pid="$(cat "$RUN/jaeger.pid")"
	fi
	wait_http jaeger "http://$JAEGER_QUERY/api/services" "$pid" 60
}

# check_collector_env: what the collector would otherwise report late or
# obscurely: a missing token (it refuses to start), a missing or wrong
# ClickHouse password (it starts, then every export fails with
# AUTHENTICATION_FAILED while the queue grows), a relative queue directory.
check_collector_env() {
	[[ -n "${TOOLGATE_OTLP_TOKEN:-}" ]] ||
		die "TOOLGATE_OTLP_TOKEN is empty: set it in ${CREDS#"$ROOT"/} (or delete that file to generate new credentials)"
	[[ -n "${TOOLGATE_CLICKHOUSE_WRITER_PASSWORD:-}" ]] ||
		die "TOOLGATE_CLICKHOUSE_WRITER_PASSWORD is empty: set it in ${CREDS#"$ROOT"/} (it becomes the collector's TOOLGATE_CLICKHOUSE_PASSWORD)"
	[[ "$STACK/otelcol/queue" == /* ]] || die "the queue directory $STACK/otelcol/queue is not absolute"
	local code
	code="$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -u "$TOOLGATE_CLICKHOUSE_WRITER_USER:$TOOLGATE_CLICKHOUSE_WRITER_PASSWORD" \
		--data-binary 'SELECT 1' "http://$CH_ADDR/" 2>/dev/null || true)"
	case "$code" in
	200) ;;
	401 | 403) die "ClickHouse at $CH_ADDR refused user $TOOLGATE_CLICKHOUSE_WRITER_USER (HTTP $code, authentication failed): the collector's TOOLGATE_CLICKHOUSE_USER/_PASSWORD come from TOOLGATE_CLICKHOUSE_WRITER_USER/_PASSWORD in ${CREDS#"$ROOT"/}, which must match the users ClickHouse was started with ('scripts/stack.sh restart' restarts both)" ;;
	*) say "warning: ClickHouse at $CH_ADDR did not answer (HTTP ${code:-none}); the collector starts anyway and queues until it is back" ;;
	esac
}

start_collector() {
	local pid mode="${TOOLGATE_AUDIT_MODE:-decisions}" configs=(--config "$DEPLOY/config.yaml")
	case "$mode" in
	decisions) ;;
	deny-only | all) configs+=(--config "$DEPLOY/modes/audit-$mode.yaml") ;;
	*) die "TOOLGATE_AUDIT_MODE=$mode: want decisions, deny-only or all" ;;
	esac
	pid="$(pid_of otelcol "$BIN/otelcol-toolgate")"
	if [[ -n "$pid" ]]; then
		say "collector already running (pid $pid)"
	else
		need_bin "$BIN/otelcol-toolgate" scripts/build-collector.sh
		check_ports collector "$OTELCOL_GRPC" "$OTELCOL_HTTP" "$OTELCOL_HEALTH" "127.0.0.1:$OTELCOL_METRICS_PORT"
		check_collector_env
		mkdir -p "$STACK/otelcol/queue"
		say "starting collector (OTLP $OTELCOL_GRPC / http://$OTELCOL_HTTP, audit mode $mode)"
		TOOLGATE_OTELCOL_GRPC="$OTELCOL_GRPC" TOOLGATE_OTELCOL_HTTP="$OTELCOL_HTTP" \
			TOOLGATE_OTELCOL_HEALTH="$OTELCOL_HEALTH" TOOLGATE_OTELCOL_METRICS_PORT="$OTELCOL_METRICS_PORT" \
			TOOLGATE_OTELCOL_QUEUE_DIR="$STACK/otelcol/queue" \
			TOOLGATE_CLICKHOUSE_ENDPOINT="http://$CH_ADDR" \
			TOOLGATE_CLICKHOUSE_USER="$TOOLGATE_CLICKHOUSE_WRITER_USER" \
			TOOLGATE_CLICKHOUSE_PASSWORD="$TOOLGATE_CLICKHOUSE_WRITER_PASSWORD" \
			TOOLGATE_OTLP_TOKEN="$TOOLGATE_OTLP_TOKEN" \
			TOOLGATE_JAEGER_OTLP_GRPC="$JAEGER_OTLP_GRPC" \
			launch otelcol "$BIN/otelcol-toolgate" "${configs[@]}"
		pid="$(cat "$RUN/otelcol.pid")"
	fi
	wait_http otelcol "http://$OTELCOL_HEALTH/" "$pid" 60
}

cmd_start() {
	command -v curl >/dev/null || die "curl is required"
	command -v ss >/dev/null || die "ss (iproute2) is required"
	credentials
	start_clickhouse
	start_jaeger
	start_collector
	say "up: OTLP grpc://$OTELCOL_GRPC and http://$OTELCOL_HTTP; Jaeger API http://$JAEGER_QUERY/api/traces;" \
		"ClickHouse http://$CH_ADDR (users in ${CREDS#"$ROOT"/}); logs in ${LOGS#"$ROOT"/}"
}

cmd_stop() {
	halt otelcol "$BIN/otelcol-toolgate" 40
	halt jaeger "$BIN/jaeger" 20
	halt clickhouse "$BIN/auditq" 30
	say "stopped"
}

cmd_status() {
	local ok=0 line
	status_line() { # name binary health-url
		local pid
		pid="$(pid_of "$1" "$2")"
		if [[ -z "$pid" ]]; then
			printf '%-11s stopped\n' "$1"
			ok=3
		elif curl -fsS -o /dev/null --max-time 2 "$3" 2>/dev/null; then
			printf '%-11s running  pid %-7s healthy    %s\n' "$1" "$pid" "$3"
		else
			printf '%-11s running  pid %-7s UNHEALTHY  %s\n' "$1" "$pid" "$3"
			ok=3
		fi
	}
	status_line clickhouse "$BIN/auditq" "http://$CH_ADDR/ping"
	status_line jaeger "$BIN/jaeger" "http://$JAEGER_QUERY/api/services"
	status_line otelcol "$BIN/otelcol-toolgate" "http://$OTELCOL_HEALTH/"
	return $ok
}

cmd_env() {
	credentials >/dev/null
	cat <<EOF
export OTEL_EXPORTER_OTLP_ENDPOINT=http://$OTELCOL_GRPC
export OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer $TOOLGATE_OTLP_TOKEN'
export TOOLGATE_OTLP_TOKEN=$TOOLGATE_OTLP_TOKEN
export AUDITQ_DSN=http://$TOOLGATE_CLICKHOUSE_READER_USER:$TOOLGATE_CLICKHOUSE_READER_PASSWORD@$CH_ADDR
export TOOLGATE_JAEGER_QUERY=http://$JAEGER_QUERY
export AUDITQ_JAEGER_URL=http://$JAEGER_QUERY
export AUDITQ_COLLECTOR_HEALTH=http://$OTELCOL_HEALTH/
EOF
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
restart) cmd_stop && cmd_start ;;
env) cmd_env ;;
-h | --help | help) sed -n '2,27p' "$0" ;;
*) echo "usage: scripts/stack.sh start|stop|status|restart|env" >&2; exit 2 ;;
esac
