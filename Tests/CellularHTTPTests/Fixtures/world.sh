#!/bin/bash
# Minimal netns world for the cellular HTTP engine tests.
#   world.sh up PREFIX WORKDIR   create namespaces PREFIX{ue,car,wifi}, DNS, test servers
#   world.sh down PREFIX WORKDIR stop the servers started here (by pid) and delete the namespaces
# PREFIXue:   wlan0 192.0.2.23/24 (default route via 192.0.2.1), wwan0 100.64.23.5/32 (no route),
#             wwan1 100.64.23.6/32 and wwan3 100.64.23.7/32 (for tests that remove them),
#             wwan4 100.64.23.8/32, wwan5 100.64.23.10/32, wwan6 100.64.23.11/32, wwan7
#             100.64.23.12/32 and wwan8 100.64.23.13/32 (one each for the tests that break the path
#             while a hop or a lookup is in flight, left broken), wwan2 up without address.
#             IPv6 only on wwan0 (fd00:64::5, fd00:64::/64 on-link), off elsewhere, so any packet
#             on wlan0 is a leak.
# PREFIXcar:  radio0..radio8 (peers of wwan0..wwan8); self.carrier.test is 100.64.23.5 (the
#             bearer's own address); fd00:64::1 on radio0 (v6.carrier.test,
#             dual.carrier.test also 100.64.0.1, http :80), fd00:64::53 on radio0 (carrier DNS over IPv6); on lo: 100.64.0.1 (mno.carrier.test, http :80
#             and other.carrier.test :8080), 203.0.113.10 (api.truid.test, https :443 and http :80),
#             100.64.0.53 (carrier DNS, dnsmasq), 100.64.0.54 (no DNS listening).
# PREFIXwifi: 192.0.2.1, the Wi-Fi side; nothing answers there.
set -euo pipefail
cmd=$1 P=$2 W=$3
UE=${P}ue CAR=${P}car WIFI=${P}wifi
here=$(cd "$(dirname "$0")" && pwd)

down() {
    for f in "$W"/*.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f"); rm -f "$f"
        kill "$pid" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    for ns in "$UE" "$CAR" "$WIFI"; do ip netns del "$ns" 2>/dev/null || true; done
}

up() {
    down
    mkdir -p "$W/hooks"
    for ns in "$UE" "$CAR" "$WIFI"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
    ip netns exec "$UE" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip netns exec "$UE" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
    ip netns exec "$WIFI" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1

    ip -n "$UE" link add wlan0 type veth peer name wl0 netns "$WIFI"
    for i in 0 1 2 3 4 5 6 7 8; do
        ip -n "$UE" link add "wwan$i" type veth peer name "radio$i" netns "$CAR"
        ip -n "$CAR" link set "radio$i" up
    done
    ip -n "$UE" addr add 192.0.2.23/24 dev wlan0
    # IPv6 only on the bearer: wwan0 fd00:64::5 with its on-link prefix, like a v6 bearer.
    ip netns exec "$UE" sysctl -qw net.ipv6.conf.wwan0.disable_ipv6=0
    ip -n "$UE" addr add fd00:64::5/128 dev wwan0 nodad
    for l in wlan0 wwan0 wwan1 wwan2 wwan3 wwan4 wwan5 wwan6 wwan7 wwan8; do ip -n "$UE" link set "$l" up; done
    ip -n "$UE" -6 route add fd00:64::/64 dev wwan0
    ip -n "$UE" route add default via 192.0.2.1 dev wlan0
    ip -n "$WIFI" addr add 192.0.2.1/24 dev wl0
    ip -n "$WIFI" link set wl0 up

    for a in 100.64.0.1 100.64.0.53 100.64.0.54 203.0.113.10; do ip -n "$CAR" addr add "$a/32" dev lo; done
    for link_host in 0:5 1:6 3:7 4:8 5:10 6:11 7:12 8:13; do
        i=${link_host%:*} host=${link_host#*:}
        ip -n "$UE" addr add "100.64.23.$host/32" dev "wwan$i"
        ip -n "$CAR" route add "100.64.23.$host/32" dev "radio$i"
    done
    ip netns exec "$CAR" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
    ip -n "$CAR" addr add fd00:64::1/128 dev radio0 nodad
    ip -n "$CAR" addr add fd00:64::53/128 dev radio0 nodad
    ip -n "$CAR" -6 route add fd00:64::5/128 dev radio0

    # Certificates: a CA that signed api.truid.test, and an unrelated CA for the wrong-CA test.
    (cd "$W" &&
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cellpath test CA" \
            -keyout ca.key -out ca.pem 2>/dev/null &&
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=wrong CA" \
            -keyout wrong-ca.key -out wrong-ca.pem 2>/dev/null &&
        openssl req -newkey rsa:2048 -nodes -subj "/CN=api.truid.test" -keyout server.key -out server.csr 2>/dev/null &&
        printf 'subjectAltName=DNS:api.truid.test,IP:203.0.113.10\n' > san.ext &&
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile san.ext -out server.pem 2>/dev/null)

    ip netns exec "$CAR" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
        --bind-dynamic --listen-address=100.64.0.53 --listen-address=fd00:64::53 --pid-file= --user=root --log-facility=- --log-queries \
        --local=/test/ --host-record=mno.carrier.test,100.64.0.1 --host-record=other.carrier.test,100.64.0.1 \
        --host-record=api.truid.test,203.0.113.10 --host-record=self.carrier.test,100.64.23.5 \
        --host-record=v6.carrier.test,fd00:64::1 --host-record=dual.carrier.test,100.64.0.1,fd00:64::1 >"$W/dnsmasq.log" 2>&1 &
    echo $! >"$W/dnsmasq.pid"

    : >"$W/server.log"
    ip netns exec "$CAR" "${PYTHON:-/usr/bin/python3}" "$here/chain_server.py" --log "$W/server.log" --hooks "$W/hooks" \
        --http 100.64.0.1:80 --http 100.64.0.1:8080 --http [fd00:64::1]:80 --http 203.0.113.10:80 --https 203.0.113.10:443 \
        --cert "$W/server.pem" --key "$W/server.key" >"$W/server.out" 2>&1 &
    echo $! >"$W/server.pid"

    for _ in $(seq 1 100); do
        if grep -q ready "$W/server.out" 2>/dev/null && grep -q "started" "$W/dnsmasq.log" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "world: servers did not start" >&2
    cat "$W/server.out" "$W/dnsmasq.log" >&2
    return 1
}

case "$cmd" in
up) up ;;
down) down ;;
*) echo "usage: world.sh up|down PREFIX WORKDIR" >&2; exit 64 ;;
esac
