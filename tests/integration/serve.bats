#!/usr/bin/env bats
# brig serve (docs/serve.md, issue #27): the real e2b SDK (npm e2b 2.51.0,
# installed once per build tree under BUILDDIR/tests/serve-sdk) against a
# server on loopback, through its public API only (serve_sdk.mjs); then what
# a hostile client sends, with curl and raw sockets: oversized bodies, a
# slow client, malformed JSON and envelopes, unknown methods, missing and
# wrong tokens. After each, the server still serves. Processes started over
# the API run inside the container, end at their Connect-Timeout-Ms, and
# SIGTERM releases every sandbox handed out; filesystem calls stay inside
# the container's root.

load helpers

SDK_VERSION=2.51.0
SDK_DIR="${BUILDDIR:-$SRCDIR}/tests/serve-sdk"
SERVE_PID=""

setup() {
	requires root program:curl program:python3
	setup_bundle
	update_config '.annotations["run.brig.rootfs.ephemeral"] = "true" | .process.args = ["sleep", "1000000"]'
	# the SDK runs every command as /bin/bash -l -c CMD; busybox has no bash
	printf '#!/bin/sh\nexec /bin/sh "$@"\n' >"$BUNDLE/rootfs/bin/bash"
	chmod 755 "$BUNDLE/rootfs/bin/bash"
	brig pool fill sp --bundle "$BUNDLE" --size 2 >/dev/null
	KEYS="$BUNDLE/keys"
	printf '# two tenants\nkey-one-%s\nkey-two-%s\n' "$RANDOM$RANDOM" "$RANDOM$RANDOM" >"$KEYS"
	chmod 600 "$KEYS"
	KEY1="$(sed -n 2p "$KEYS")"
	KEY2="$(sed -n 3p "$KEYS")"
}

teardown() {
	stop_server
	brig pool drain sp >/dev/null 2>&1 || true
	teardown_bundle
	return 0
}

# start_server [SERVE OPTIONS]: brig serve on a free loopback port, in the
# background; sets SERVE_PID and URL.
start_server() {
	local i
	"$BRIG" --root "$ROOT" serve --listen 127.0.0.1:0 --api-key-file "$KEYS" "$@" \
		>"$BUNDLE/serve.out" 2>"$BUNDLE/serve.err" </dev/null &
	SERVE_PID=$!
	for i in $(seq 100); do
		grep -q 'listening on' "$BUNDLE/serve.out" 2>/dev/null && break
		sleep 0.05
	done
	URL="$(sed -n 's/^brig serve: listening on //p' "$BUNDLE/serve.out")"
	[ -n "$URL" ] || { cat "$BUNDLE/serve.err"; return 1; }
}

stop_server() {
	[ -n "$SERVE_PID" ] || return 0
	kill -TERM "$SERVE_PID" 2>/dev/null || true
	timeout 60 tail --pid="$SERVE_PID" -f /dev/null 2>/dev/null || kill -KILL "$SERVE_PID" 2>/dev/null || true
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=""
}

# api METHOD PATH [BODY] [CURL ARGS]: the control plane with KEY1; prints
# the status then the body.
api() {
	local m="$1" p="$2" b="${3:-}"
	shift 3 || shift $#
	curl -s -o "$BUNDLE/body${W:-}" -w '%{http_code}\n' -X "$m" -H "X-API-KEY: $KEY1" \
		-H 'Content-Type: application/json' ${b:+--data-binary "$b"} "$@" "$URL$p"
	cat "$BUNDLE/body${W:-}"
}

# create: a sandbox of pool sp for KEY1; sets SB and TOKEN.
create() {
	local out
	out="$(api POST /v2/sandboxes '{"templateID":"sp"}')"
	[ "$(head -1 <<<"$out")" = 201 ] || { echo "$out"; return 1; }
	SB="$(tail -n +2 <<<"$out" | jq -r .sandboxID)"
	TOKEN="$(tail -n +2 <<<"$out" | jq -r .envdAccessToken)"
}

# envd RPC JSON [CURL ARGS]: a unary Connect call in sandbox SB.
envd() {
	local rpc="$1" body="$2"
	shift 2
	curl -s -o "$BUNDLE/body${W:-}" -w '%{http_code}\n' -X POST -H "E2b-Sandbox-Id: $SB" \
		-H "X-Access-Token: $TOKEN" -H 'Content-Type: application/json' \
		--data-binary "$body" "$@" "$URL/$rpc"
	cat "$BUNDLE/body${W:-}"
}

# envelope JSON: one Connect envelope (flags 0) on stdout.
envelope() {
	python3 -c 'import sys,struct; b=sys.argv[1].encode(); sys.stdout.buffer.write(b"\0"+struct.pack(">I",len(b))+b)' "$1"
}

# frames FILE: the envelopes of a stream response, one "FLAGS JSON" line each.
frames() {
	python3 -c '
import sys,struct
d=open(sys.argv[1],"rb").read(); i=0
while i+5<=len(d):
    n=struct.unpack(">I",d[i+1:i+5])[0]; print(d[i], d[i+5:i+5+n].decode()); i+=5+n
if i!=len(d): print("TRUNCATED")' "$1"
}

# stream RPC BODY-FILE [CURL ARGS]: a streamed Connect call; frames to stdout.
stream() {
	local rpc="$1" in="$2"
	shift 2
	curl -s -o "$BUNDLE/stream${W:-}" -w '%{http_code}\n' -X POST -H "E2b-Sandbox-Id: $SB" \
		-H "X-Access-Token: $TOKEN" -H 'Content-Type: application/connect+json' \
		--data-binary "@$in" "$@" "$URL/$rpc" || true
	frames "$BUNDLE/stream${W:-}"
}

# run_cmd CMD: run sh -c CMD in sandbox SB (Start, no deadline); prints its
# stdout, then "exit N" from the end event.
run_cmd() {
	envelope "$(jq -cn --arg c "$1" '{process: {cmd: "/bin/sh", args: ["-c", $c]}}')" >"$BUNDLE/cmd${W:-}"
	stream process.Process/Start "$BUNDLE/cmd${W:-}" -H 'Connect-Timeout-Ms: 0' |
		python3 -c '
import sys, json, base64
for line in sys.stdin:
    parts = line.rstrip("\n").split(" ", 1)
    if len(parts) < 2 or not parts[1].startswith("{"):
        continue
    ev = json.loads(parts[1]).get("event", {})
    if "data" in ev and "stdout" in ev["data"]:
        sys.stdout.write(base64.b64decode(ev["data"]["stdout"]).decode())
    if "end" in ev:
        print("exit", ev["end"].get("exitCode", 0))'
}

# fds_of PID: how many fds the process has open.
fds_of() {
	ls "/proc/$1/fd" | wc -l
}

install_sdk() {
	if [ "$(jq -r .version "$SDK_DIR/node_modules/e2b/package.json" 2>/dev/null)" != "$SDK_VERSION" ]; then
		mkdir -p "$SDK_DIR"
		npm install --no-audit --no-fund --no-save --prefix "$SDK_DIR" --cache "$SDK_DIR/npm-cache" \
			"e2b@$SDK_VERSION" >"$SDK_DIR/install.log" 2>&1 ||
			{ cat "$SDK_DIR/install.log"; echo "npm could not install e2b@$SDK_VERSION"; return 1; }
	fi
	cp "$SRCDIR/tests/integration/serve_sdk.mjs" "$SRCDIR/tests/integration/serve_sdk_claim.mjs" \
		"$SRCDIR/tests/integration/serve_sdk_files.mjs" "$SDK_DIR/"
}

# need_node: the node the SDK needs.
need_node() {
	requires program:node program:npm
	# e2b 2.51.0 needs node >= 20.18.1 (its engines field)
	node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=18)?0:1)' ||
		{ echo "node $(node --version) is older than e2b $SDK_VERSION needs (20.18.1)"; return 1; }
}

@test "serve: the e2b SDK creates from a pool, runs commands (streamed, failing, background, stdin, reconnect), lists, keeps keys apart, kills" {
	requires program:node program:npm
	# e2b 2.51.0 needs node >= 20.18.1 (its engines field)
	node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=18)?0:1)' ||
		{ echo "node $(node --version) is older than e2b $SDK_VERSION needs (20.18.1)"; return 1; }
	install_sdk
	start_server
	local fds0 fds1 i
	fds0="$(fds_of "$SERVE_PID")"
	run env E2B_API_URL="$URL" E2B_SANDBOX_URL="$URL" E2B_API_KEY="$KEY1" KEY1="$KEY1" KEY2="$KEY2" POOL=sp \
		timeout 300 node "$SDK_DIR/serve_sdk.mjs"
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "all checks passed"
	# kill released both: the pool has them back
	[ "$(brig pool status sp --format json | jq '[.members[] | select(.pool == "available")] | length')" -eq 2 ]
	# no fd of the server is left once the SDK's connections are gone
	for i in $(seq 50); do
		fds1="$(fds_of "$SERVE_PID")"
		[ "$fds1" -le "$fds0" ] && break
		sleep 0.1
	done
	echo "server fds: $fds0 before, $fds1 after"
	[ "$fds1" -le "$fds0" ]
}

@test "serve: create's envs, metadata and timeout through the SDK: commands see the envs, list and getInfo the metadata, the lease ends the sandbox and the keeper puts the member back" {
	need_node
	install_sdk
	start_server
	run env E2B_API_URL="$URL" E2B_SANDBOX_URL="$URL" E2B_API_KEY="$KEY1" KEY1="$KEY1" POOL=sp \
		timeout 300 node "$SDK_DIR/serve_sdk_claim.mjs"
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "all checks passed"
	# the record of the ended sandbox is gone, and the keeper released its member
	local short i
	short="$(sed -n 's/^SHORT //p' <<<"$output")"
	[ -n "$short" ]
	for i in $(seq 50); do
		[ ! -e "$ROOT/@serve/sandboxes/$short.json" ] && break
		sleep 0.1
	done
	[ ! -e "$ROOT/@serve/sandboxes/$short.json" ]
	for i in $(seq 100); do
		[ "$(brig pool status sp --format json | jq .counts.available)" -eq 2 ] && break
		sleep 0.1
	done
	brig pool status sp --format json | jq -c .counts
	[ "$(brig pool status sp --format json | jq .counts.available)" -eq 2 ]
}

@test "serve: files.write and files.read through brig cp's library: text, 5 MiB binary, several files; a symlink out of the root changes nothing outside" {
	need_node
	install_sdk
	start_server
	local outside="$BUNDLE/outside"
	mkdir -p "$outside"
	echo untouched >"$outside/keep"
	run env E2B_API_URL="$URL" E2B_SANDBOX_URL="$URL" E2B_API_KEY="$KEY1" KEY1="$KEY1" POOL=sp \
		OUTSIDE="$outside" timeout 300 node "$SDK_DIR/serve_sdk_files.mjs"
	echo "$output"
	[ "$status" -eq 0 ]
	assert_contains "$output" "all checks passed"
	# nothing outside the root changed
	[ "$(ls -A "$outside")" = keep ]
	[ "$(cat "$outside/keep")" = untouched ]
	[ ! -e /tmp/brig-serve-escape-probe ]
	# no spool is left
	[ -z "$(ls -A "$ROOT/@serve/run")" ]
}

@test "serve: after the first tenant's kill, the second finds nothing of it in the same members" {
	start_server
	local pids="" sb out
	create
	local a="$SB" ta="$TOKEN"
	create
	local b="$SB" tb="$TOKEN"
	for sb in "$a:$ta" "$b:$tb"; do
		SB="${sb%%:*}" TOKEN="${sb#*:}"
		run run_cmd 'echo secret >/tmp/marker; sleep 1000 >/dev/null 2>&1 & echo $!'
		assert_contains "$output" "exit 0"
		run envd process.Process/List '{}'
		[ "${lines[0]}" = 200 ]
	done
	# the background sleeps, by their host pids (children of the shells)
	pids="$(for m in $(jq -r .member "$ROOT"/@serve/sandboxes/*.json); do
		for p in $(pgrep -f '^sleep 1000$'); do
			if [ "$(cat "/proc/$p/cgroup" 2>/dev/null)" = "$(cat "/proc/$(brig state "$m" | jq .pid)/cgroup")" ]; then
				echo "$p"
			fi
		done
	done)"
	[ "$(wc -w <<<"$pids")" -eq 2 ]
	run curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "X-API-KEY: $KEY1" "$URL/sandboxes/$a"
	[ "$output" = 204 ]
	run curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "X-API-KEY: $KEY1" "$URL/sandboxes/$b"
	[ "$output" = 204 ]
	for p in $pids; do ! process_alive "$p" || false; done
	# the second tenant gets both members (the pool has two): clean
	for i in 1 2; do
		out="$(curl -s -X POST -H "X-API-KEY: $KEY2" -H 'Content-Type: application/json' \
			--data '{"templateID":"sp"}' "$URL/v2/sandboxes")"
		SB="$(jq -r .sandboxID <<<"$out")" TOKEN="$(jq -r .envdAccessToken <<<"$out")"
		[ "$SB" != "$a" ] && [ "$SB" != "$b" ]
		run run_cmd 'cat /tmp/marker 2>&1; ps -o args | grep -cx "sleep 1000"'
		echo "$output"
		assert_contains "$output" "No such file"
		[ "${lines[1]}" = 0 ]
		# and KEY1's tokens open nothing of them
		TOKEN="$ta"
		run envd process.Process/List '{}'
		[ "${lines[0]}" = 401 ]
	done
	# KEY1's old ids are gone for it
	run curl -s -o /dev/null -w '%{http_code}' -H "X-API-KEY: $KEY1" "$URL/sandboxes/$a"
	[ "$output" = 404 ]
}

@test "serve: a process runs in the container, outlives its stream, and ends at Connect-Timeout-Ms" {
	start_server
	create
	# the client goes away after 0.5 s; the process stays, as envd's
	envelope '{"process":{"cmd":"/bin/sh","args":["-c","echo $$; sleep 1000"]},"stdin":false}' >"$BUNDLE/start"
	run stream process.Process/Start "$BUNDLE/start" -H 'Connect-Timeout-Ms: 3000' --max-time 0.5
	echo "$output"
	assert_contains "$output" '0 {"event":{"start":{"pid":'
	pid="$(sed -n 's/.*"start":{"pid":\([0-9]*\)}.*/\1/p' <<<"$output")"
	[ -n "$pid" ]
	# a host pid, in the member's cgroup
	member="$(jq -r .member "$ROOT/@serve/sandboxes/$SB.json")"
	[ "$(cat "/proc/$pid/cgroup")" = "$(cat "/proc/$(brig state "$member" | jq .pid)/cgroup")" ]
	[ "$(readlink "/proc/$pid/ns/pid")" = "$(readlink "/proc/$(brig state "$member" | jq .pid)/ns/pid")" ]
	run envd process.Process/List '{}'
	assert_contains "$output" "\"pid\":$pid"
	# the deadline kills it
	for i in $(seq 100); do
		process_alive "$pid" || break
		sleep 0.1
	done
	! process_alive "$pid" || false
	run envd process.Process/List '{}'
	[ "${lines[1]}" = '{"processes":[]}' ]
	# a command that cannot start is an end-stream error, not a hang
	envelope '{"process":{"cmd":"/no/such"}}' >"$BUNDLE/bad"
	run stream process.Process/Start "$BUNDLE/bad"
	echo "$output"
	[ "${lines[0]}" = 200 ]
	assert_contains "${lines[1]}" '2 {"error":{"code":"invalid_argument"'
}

@test "serve: oversized bodies are refused (413), with and without Content-Length; the server goes on" {
	start_server --max-body 4096
	head -c 10000 /dev/zero | tr '\0' a >"$BUNDLE/big"
	run api POST /v2/sandboxes "@$BUNDLE/big"
	echo "$output"
	[ "${lines[0]}" = 413 ]
	assert_contains "${lines[1]}" '"code":413'
	run api POST /v2/sandboxes "@$BUNDLE/big" -H 'Transfer-Encoding: chunked'
	echo "$output"
	[ "${lines[0]}" = 413 ]
	run api POST /v2/sandboxes '{"templateID":"sp"}'
	[ "${lines[0]}" = 201 ]
	run curl -s -o /dev/null -w '%{http_code}' "$URL/health"
	[ "$output" = 204 ]
}

@test "serve: a client that sends a byte at a time is cut off at --request-timeout while others are served" {
	start_server --request-timeout 2
	local port="${URL##*:}" t0 t1
	t0="$(date +%s%N)"
	# headers trickled at 4 bytes a second for up to 15 s
	timeout 20 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$1"
		printf "POST /v2/sandboxes HTTP/1.1\r\nHost: x\r\n" >&3
		for i in $(seq 60); do printf "X" >&3 || exit 0; sleep 0.25; done
		exit 1' _ "$port" &
	local slow=$!
	sleep 0.5
	# served meanwhile, at once
	run curl -s -m 2 -o /dev/null -w '%{http_code}' -H "X-API-KEY: $KEY1" "$URL/v2/sandboxes"
	[ "$output" = 200 ]
	# not `run wait`: run's subshell is not the client's parent
	local rc=0
	wait "$slow" || rc=$?
	t1="$(date +%s%N)"
	echo "slow client: status $rc after $(((t1 - t0) / 1000000)) ms"
	# cut off (a write failed: SIGPIPE or the loop's exit 0), not at the loop's end
	[ "$rc" -eq 0 ] || [ "$rc" -eq 141 ]
	[ $(((t1 - t0) / 1000000)) -ge 1500 ] && [ $(((t1 - t0) / 1000000)) -lt 8000 ]
	# a stream is not a slow request: a process silent for longer than
	# --request-timeout still delivers its output and its end
	create
	run run_cmd 'sleep 4; echo done'
	echo "$output"
	[ "$output" = "$(printf 'done\nexit 0')" ]
}

@test "serve: malformed JSON and envelopes, unknown methods and routes get clear errors; the server goes on" {
	start_server
	run api POST /v2/sandboxes '{"templateID":'
	echo "$output"
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" '"code":400'
	run api POST /v2/sandboxes "$(printf '[%.0s' $(seq 5000))"
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" 'nests deeper than 32'
	run api POST /v2/sandboxes '{"templateID":"sp","envVars":{"A":1}}'
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" 'envVars.A: expected a string'
	run api POST /v2/sandboxes '{"templateID":"sp","timeout":"soon"}'
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" 'timeout: expected whole seconds'
	run api POST /v2/sandboxes '{"templateID":"sp","timeout":99999999}'
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" 'timeout: --deadline'
	run api POST /v2/sandboxes '{"templateID":"sp","network":{}}'
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" 'network is not supported by brig serve yet'
	run api POST /v2/sandboxes '{"templateID":"../x"}'
	[ "${lines[0]}" = 400 ]
	run api POST /v2/sandboxes '{"templateID":"nopool"}'
	echo "$output"
	[ "${lines[0]}" = 404 ]
	run api GET /v3/templates
	[ "${lines[0]}" = 501 ]
	create
	run api POST "/sandboxes/$SB/timeout" '{"timeout":[]}'
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" 'timeout: expected whole seconds'
	run api POST "/sandboxes/$SB/pause" '{}'
	[ "${lines[0]}" = 501 ]
	# envd: a unary body that is not JSON, an unknown RPC, a stream one
	run envd process.Process/List 'nope'
	echo "$output"
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" '"code":"invalid_argument"'
	run envd process.Process/Update '{}'
	[ "${lines[0]}" = 501 ]
	assert_contains "${lines[1]}" '"code":"unimplemented"'
	envelope '{"path":"/"}' >"$BUNDLE/watch"
	run stream filesystem.Filesystem/WatchDir "$BUNDLE/watch"
	[ "${lines[0]}" = 200 ]
	assert_contains "${lines[1]}" '2 {"error":{"code":"unimplemented"'
	# a truncated envelope, and one whose length lies
	printf '\0\0\0' >"$BUNDLE/short"
	run stream process.Process/Start "$BUNDLE/short"
	assert_contains "${lines[1]}" 'incomplete envelope'
	printf '\0\0\0\0\xff{}' >"$BUNDLE/liar"
	run stream process.Process/Start "$BUNDLE/liar"
	assert_contains "${lines[1]}" '"code":"invalid_argument"'
	run envd process.Process/SendSignal '{"process":{"pid":999999},"signal":"SIGNAL_SIGKILL"}'
	[ "${lines[0]}" = 404 ]
	assert_contains "${lines[1]}" '"code":"not_found"'
	# still serving
	run envd process.Process/List '{}'
	[ "${lines[0]}" = 200 ]
}

@test "serve: envd needs the sandbox's own token; another tenant's or none gets nothing run" {
	start_server
	create
	local sb1="$SB" tok1="$TOKEN"
	run curl -s -o "$BUNDLE/body${W:-}" -w '%{http_code}' -X POST -H "E2b-Sandbox-Id: $SB" \
		-H 'Content-Type: application/json' --data '{}' "$URL/process.Process/List"
	[ "$output" = 401 ]
	grep -q '"code":"unauthenticated"' "$BUNDLE/body${W:-}"
	# KEY2's sandbox token does not open KEY1's sandbox
	out="$(curl -s -X POST -H "X-API-KEY: $KEY2" -H 'Content-Type: application/json' \
		--data '{"templateID":"sp"}' "$URL/v2/sandboxes")"
	tok2="$(jq -r .envdAccessToken <<<"$out")"
	[ -n "$tok2" ] && [ "$tok2" != "$tok1" ]
	TOKEN="$tok2"
	envelope '{"process":{"cmd":"/bin/sh","args":["-c","touch /tmp/pwned"]}}' >"$BUNDLE/start"
	run stream process.Process/Start "$BUNDLE/start"
	[ "${lines[0]}" = 401 ]
	TOKEN="$tok1"
	run envd process.Process/List '{}'
	[ "${lines[0]}" = 200 ]
	member="$(jq -r .member "$ROOT/@serve/sandboxes/$sb1.json")"
	run brig exec "$member" ls /tmp/pwned
	[ "$status" -ne 0 ]
	# an unknown sandbox is 502 as at E2B's edge
	SB=sbnosuch
	run envd process.Process/List '{}'
	[ "${lines[0]}" = 502 ]
	# KEY2 cannot delete KEY1's sandbox
	run curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "X-API-KEY: $KEY2" "$URL/sandboxes/$sb1"
	[ "$output" = 404 ]
	[ -e "$ROOT/@serve/sandboxes/$sb1.json" ]
}

@test "serve: SIGTERM releases every sandbox handed out and kills their processes" {
	start_server
	create
	envelope '{"process":{"cmd":"/bin/sh","args":["-c","echo $$; exec sleep 1000"]}}' >"$BUNDLE/start"
	run stream process.Process/Start "$BUNDLE/start" --max-time 0.5 -H 'Connect-Timeout-Ms: 0'
	pid="$(sed -n 's/.*"start":{"pid":\([0-9]*\)}.*/\1/p' <<<"$output")"
	[ -n "$pid" ]
	process_alive "$pid"
	[ "$(brig pool status sp --format json | jq '[.members[] | select(.pool == "claimed")] | length')" -eq 1 ]
	stop_server
	! process_alive "$pid" || false
	[ "$(brig pool status sp --format json | jq '[.members[] | select(.pool == "available")] | length')" -eq 2 ]
	[ -z "$(ls "$ROOT/@serve/sandboxes")" ]
}

@test "serve: 50 sandboxes created, used and killed by 5 concurrent clients: no failure, nothing left" {
	brig pool fill sp --size 6 >/dev/null
	start_server
	local fds0 w
	fds0="$(fds_of "$SERVE_PID")"
	worker() {
		local W="$1" i tries out
		for i in $(seq 10); do
			for tries in $(seq 200); do
				out="$(api POST /v2/sandboxes '{"templateID":"sp"}')"
				[ "$(head -1 <<<"$out")" = 503 ] || break
				sleep 0.1
			done
			[ "$(head -1 <<<"$out")" = 201 ] || { echo "create: $out"; return 1; }
			SB="$(tail -n +2 <<<"$out" | jq -r .sandboxID)"
			TOKEN="$(tail -n +2 <<<"$out" | jq -r .envdAccessToken)"
			out="$(run_cmd 'echo $((6 * 7))')"
			[ "$out" = "$(printf '42\nexit 0')" ] || { echo "run: $out"; return 1; }
			out="$(api DELETE "/sandboxes/$SB")"
			[ "$(head -1 <<<"$out")" = 204 ] || { echo "kill: $out"; return 1; }
		done
		echo done
	}
	local workers=""
	for w in 1 2 3 4 5; do
		worker "$w" >"$BUNDLE/worker$w" 2>&1 &
		workers="$workers $!"
	done
	# only the workers: the server is a child of this shell too
	wait $workers
	for w in 1 2 3 4 5; do
		echo "worker $w: $(cat "$BUNDLE/worker$w")"
		[ "$(cat "$BUNDLE/worker$w")" = done ]
	done
	[ "$(brig pool status sp --format json | jq .counts.available)" -eq 6 ]
	[ -z "$(find "$ROOT/@serve/sandboxes" "$ROOT/@serve/run" -mindepth 1)" ]
	# no process of the server's making is left: runners are its children
	[ -z "$(pgrep -P "$SERVE_PID")" ]
	for i in $(seq 50); do
		[ "$(fds_of "$SERVE_PID")" -le "$fds0" ] && break
		sleep 0.1
	done
	[ "$(fds_of "$SERVE_PID")" -le "$fds0" ]
}

@test "serve: filesystem calls run in the container: magic links refused, a link to / removed as a link, what they make is the container's" {
	start_server
	create
	run run_cmd 'mkdir -p /tmp/t && ln -s / /tmp/t/top && ln -s /proc/1/root /tmp/magic && echo x >/tmp/t/f'
	assert_contains "$output" "exit 0"
	fs() { envd "filesystem.Filesystem/$1" "$2"; }
	run fs Stat '{"path":"/tmp/magic/etc"}'
	echo "$output"
	[ "${lines[0]}" = 400 ]
	assert_contains "${lines[1]}" '"code":"invalid_argument"'
	run fs ListDir '{"path":"/tmp/t/top/bin","depth":1}'
	[ "${lines[0]}" = 200 ]
	assert_contains "${lines[1]}" '"path":"/tmp/t/top/bin/sh"'
	run fs Remove '{"path":"/tmp/t"}'
	[ "${lines[0]}" = 200 ]
	run run_cmd 'ls /bin/sh; ls /tmp/t 2>&1'
	echo "$output"
	assert_contains "$output" "/bin/sh"
	assert_contains "$output" "No such file"
	run fs MakeDir '{"path":"/tmp/t2/x"}'
	[ "${lines[0]}" = 200 ]
	run fs MakeDir '{"path":"/tmp/t2/x"}'
	[ "${lines[0]}" = 409 ]
	assert_contains "${lines[1]}" '"code":"already_exists"'
	run run_cmd 'stat -c %u:%g /tmp/t2/x'
	[ "${lines[0]}" = "0:0" ]
	run fs Move '{"source":"/tmp/nope","destination":"/tmp/x"}'
	[ "${lines[0]}" = 404 ]
	run fs ListDir '{"path":"/tmp","depth":0}'
	[ "${lines[0]}" = 400 ]
}

@test "serve: a restarted server adopts what a killed one handed out: the same owner, token and member; the next SIGTERM releases it" {
	start_server
	create
	local member
	member="$(jq -r .member "$ROOT/@serve/sandboxes/$SB.json")"
	# the record holds no key, only its fingerprint
	! grep -qF "$KEY1" "$ROOT/@serve/sandboxes/$SB.json" || false
	kill -KILL "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=""
	start_server
	run api GET "/sandboxes/$SB"
	[ "${lines[0]}" = 200 ]
	run curl -s -o /dev/null -w '%{http_code}' -H "X-API-KEY: $KEY2" "$URL/sandboxes/$SB"
	[ "$output" = 404 ]
	run run_cmd 'echo still'
	[ "${lines[0]}" = still ]
	[ "$(brig pool status sp --format json | jq -r --arg m "$member" '.members[] | select(.id == $m) | .pool')" = claimed ]
	stop_server
	[ "$(brig pool status sp --format json | jq -r --arg m "$member" '.members[] | select(.id == $m) | .pool')" = available ]
	[ ! -e "$ROOT/@serve/sandboxes/$SB.json" ]
}
