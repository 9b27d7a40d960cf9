# pmix-compare: the table from the RESULT lines of every run.
# Input lines: ROUND <TAB> RESULT <TAB> ROW <TAB> LIB <TAB> key=value ...
# (a run that failed: key FAIL=reason). Medians across rounds.
# LIB: futex (the floor), openpmix, fastpmix, and baseline (fastpmix built
# from an older commit: bench-compare --baseline REV; -v baseline=REV names
# it). A library with no line at all (bench-compare --no-openpmix,
# --no-fastpmix) gets no row; with baseline lines every table gets a
# fastpmix/baseline column, and the report ends with the rows against the
# baseline. Data exchange (get, fence-N, fence-collect-N, wireup-N) has
# sections of its own after the latency one.
# Scale (startup-N, reg-N, mem-N and fanout-N from scale.c) has a section
# of its own too: every measure at each N and its ratio per doubling; so
# has the busy node (busy-*, steal-*: tools/pmix-compare/busy.c).
BEGIN { FS = "\t" }

$2 == "RESULT" {
    row = $3; lib = $4
    libseen[lib] = 1
    if (!(row in seen)) { seen[row] = 1; order[++nrows] = row }
    k = row SUBSEP lib
    runs[k]++
    for (i = 5; i <= NF; i++) {
        eq = index($i, "=")
        if (!eq) continue
        name = substr($i, 1, eq - 1); val = substr($i, eq + 1)
        if (name == "FAIL") { fail[k] = val; continue }
        n = ++cnt[k, name]
        v[k, name, n] = val
        # Per round too (several jobs of a round: their mean), so that the
        # baseline's measures can be paired with fastpmix's round by round.
        rsum[k, name, $1] += val; rcnt[k, name, $1]++
        if (!($1 in roundseen)) { roundseen[$1] = 1; rounds[++nrounds] = $1 }
    }
}

# Prints a latency row's OpenPMIx and baseline lines (when those libraries
# ran: `ho`, `hb`), their p50/p90/p99 or why they were not measured; returns
# the lead the next line of the row takes (the row's name, once).
function other_libs(row, sc, ho, hb,    k, lib, key, p50, lead) {
    lead = row
    for (k = 1; k <= 2; k++) {
        lib = (k == 1) ? "openpmix" : "baseline"
        if ((k == 1 && !ho) || (k == 2 && !hb)) continue
        key = row SUBSEP lib
        p50 = median(key, "p50")
        if (p50 != "") printf sc " %-9s %10s %10s %10s%s\n", lead, lib, us(p50), us(median(key, "p90")), us(median(key, "p99")), badnote(key)
        else printf sc " %-9s %s\n", lead, lib, na(key)
        lead = ""
    }
    return lead
}

function median(k, name,    n, i, j, a, t) {
    n = cnt[k, name]
    if (!n) return ""
    for (i = 1; i <= n; i++) a[i] = v[k, name, i] + 0
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

function us(ns) {
    if (ns == "") return "-"
    ns /= 1000
    if (ns < 10) return sprintf("%.2f", ns)
    if (ns < 1000) return sprintf("%.1f", ns)
    return sprintf("%.0f", ns)
}

function ratio(a, b) { return (a == "" || b == "" || b + 0 <= 0) ? "-" : sprintf("%.2fx", a / b) }

function na(k) {
    if (k in fail) return "n/a (" fail[k] ")"
    return "n/a (no result)"
}

function badnote(k,    b) {
    b = median(k, "bad")
    if (b != "" && b + 0 > 0) { anybad = 1; return " [bad " b "]" }
    return ""
}

END {
    hb = ("baseline" in libseen); ho = ("openpmix" in libseen); hf = ("fastpmix" in libseen)
    floor = median("floor" SUBSEP "futex", "p50")
    # a fanout-N row against the raw futex floor of the same fan-out
    # (floor-fanout-N: N processes asleep on one word, one FUTEX_WAKE):
    # a column only when the run has such a row
    hasff = 0
    # the scenario column: 14 wide, or the longest latency row's name
    sw = 14
    for (r = 1; r <= nrows; r++) {
        if (order[r] ~ /^floor-fanout-[0-9]+$/ && median(order[r] SUBSEP "futex", "p50") + 0 > 0) hasff = 1
        if (order[r] !~ /^(tput|sys|sysgap|sysown)-/ && length(order[r]) > sw) sw = length(order[r])
    }
    sc = "%-" sw "s"
    lat = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row ~ /^(tput|sys|sysgap|sysown)-/ || isdata(row)) continue
        if (isscale(row)) continue
        if (isbusy(row)) continue
        if (!lat++) {
            printf "\nLatency, one event at a time (microseconds; median across rounds of each run's percentiles)\n"
            if (hb) printf sc " %-9s %10s %10s %10s   %-18s %-15s %s%s\n", "scenario", "lib", "p50", "p90", "p99", "OpenPMIx/fastpmix", "fastpmix/floor", (hasff ? sprintf("%-22s ", "fastpmix/floor-fanout") : ""), "fastpmix/baseline"
            else if (hasff) printf sc " %-9s %10s %10s %10s   %-18s %-15s %s\n", "scenario", "lib", "p50", "p90", "p99", "OpenPMIx/fastpmix", "fastpmix/floor", "fastpmix/floor-fanout"
            else printf sc " %-9s %10s %10s %10s   %-18s %s\n", "scenario", "lib", "p50", "p90", "p99", "OpenPMIx/fastpmix", "fastpmix/floor"
        }
        if (row ~ /^floor/) {
            k = row SUBSEP "futex"
            if (cnt[k, "p50"]) printf sc " %-9s %10s %10s %10s   %-18s %s\n", row, "futex", us(median(k, "p50")), us(median(k, "p90")), us(median(k, "p99")), "", ratio(median(k, "p50"), floor)
            else printf sc " %-9s %s\n", row, "futex", na(k)
            continue
        }
        o = row SUBSEP "openpmix"; f = row SUBSEP "fastpmix"; b = row SUBSEP "baseline"
        op50 = median(o, "p50"); fp50 = median(f, "p50"); bp50 = median(b, "p50")
        lead = other_libs(row, sc, ho, hb)
        if (hb) {
            if (!hf) continue
            # every ratio cell printed ("-" when none), the baseline's last
            if (fp50 != "") printf sc " %-9s %10s %10s %10s   %-18s %-15s %s%s%s\n", lead, "fastpmix", us(fp50), us(median(f, "p90")), us(median(f, "p99")), ratio(op50, fp50), (row ~ /^(reg|regdereg)-/ ? "-" : ratio(fp50, floor)), (hasff ? sprintf("%-22s ", row ~ /^fanout-[0-9]+$/ ? ratio(fp50, median("floor-" row SUBSEP "futex", "p50")) : "-") : ""), ratio(fp50, bp50), badnote(f)
            else printf sc " %-9s %s\n", lead, "fastpmix", na(f)
            continue
        }
        if (!hf) continue
        if (fp50 != "" && hasff && row ~ /^fanout-[0-9]+$/)
            printf sc " %-9s %10s %10s %10s   %-18s %-15s %s%s\n", lead, "fastpmix", us(fp50), us(median(f, "p90")), us(median(f, "p99")), ratio(op50, fp50), ratio(fp50, floor), ratio(fp50, median("floor-" row SUBSEP "futex", "p50")), badnote(f)
        else if (fp50 != "") printf sc " %-9s %10s %10s %10s   %-18s %s%s\n", lead, "fastpmix", us(fp50), us(median(f, "p90")), us(median(f, "p99")), ratio(op50, fp50), (row ~ /^(reg|regdereg)-/ ? "-" : ratio(fp50, floor)), badnote(f)
        else printf sc " %-9s %s\n", lead, "fastpmix", na(f)
    }
    if (hasff) printf "fastpmix/floor-fanout: a fanout-N row against floor-fanout-N, N processes woken by one FUTEX_WAKE (no PMIx) in the same run\n"
    if (hb && lat) printf "fastpmix/baseline: p50 of this tree's library over the baseline's (%s), built from that commit and run in the same rounds; above 1 = slower\n", (baseline != "" ? baseline : "an older commit")
    rn = median("reg-new" SUBSEP "openpmix", "p50")
    if (rn != "" && rn > 30000000)
        printf "reg-new on OpenPMIx: ~40 ms is a write held by Nagle until the server's delayed ACK (4.2.2 never sets TCP_NODELAY)\n"
    if (anybad) printf "[bad N]: N events of the run had no sample (missing t0 or a receiver that did not answer)\n"
    datasections()
    scalesection()
    busysections()

    # where the last handler ran: the CPU its notifier was on, or another
    # and each kind against the floor of that kind (floor-same: both
    # processes bound to one CPU; floor-other: to two)
    fsame = median("floor-same" SUBSEP "futex", "p50")
    fother = median("floor-other" SUBSEP "futex", "p50")
    hdr = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        for (li = 1; li <= 4; li++) {
            lib = li == 1 ? "futex" : li == 2 ? "openpmix" : li == 3 ? "baseline" : "fastpmix"
            k = row SUBSEP lib
            if (!cnt[k, "same"]) continue
            if (!hdr++) {
                printf "\nWhere the last handler ran (share of events on the CPU the notifier was on at t0; p50 of each kind in microseconds, and against the floor of that kind)\n"
                printf sc " %-9s %10s %10s %10s %12s %12s\n", "scenario", "lib", "same CPU", "p50 same", "p50 other", "/floor-same", "/floor-other"
            }
            ps = median(k, "p50same"); po = median(k, "p50other")
            printf sc " %-9s %9.0f%% %10s %10s %12s %12s\n", (row != lastwhere ? row : ""), lib, 100 * median(k, "same"), us(ps), us(po), ratio(ps, fsame), ratio(po, fother)
            lastwhere = row
        }
    }
    if (hdr) printf "a thread woken on another CPU than its waker's may first wait for that CPU to leave a halt; p50 same/other: median across the rounds that had such events\n"

    hdr = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row !~ /^tput-/) continue
        if (!hdr++) {
            printf "\nSustained throughput (server notifies back to back, at most --window events ahead of the slowest receiver)\n"
            if (hb) printf "%-14s %-9s %12s %16s %16s   %-16s %-28s %s\n", "scenario", "lib", "events/s", "server CPU ns/ev", "client CPU ns/ev", "fastpmix/OpenPMIx", "server CPU OpenPMIx/fastpmix", "fastpmix/baseline: events/s, server CPU"
            else printf "%-14s %-9s %12s %16s %16s   %-16s %s\n", "scenario", "lib", "events/s", "server CPU ns/ev", "client CPU ns/ev", "fastpmix/OpenPMIx", "server CPU OpenPMIx/fastpmix"
        }
        o = row SUBSEP "openpmix"; f = row SUBSEP "fastpmix"; b = row SUBSEP "baseline"
        oe = median(o, "evps"); fe = median(f, "evps"); be = median(b, "evps")
        lead = row
        if (ho) {
            if (oe != "") printf "%-14s %-9s %12.0f %16.0f %16.0f\n", lead, "openpmix", oe, median(o, "srv_cpu"), median(o, "cli_cpu")
            else printf "%-14s %-9s %s\n", lead, "openpmix", (cnt[o, "lost"] ? "n/a (" median(o, "lost") " events lost)" : na(o))
            lead = ""
        }
        if (hb) {
            if (be != "") printf "%-14s %-9s %12.0f %16.0f %16.0f\n", lead, "baseline", be, median(b, "srv_cpu"), median(b, "cli_cpu")
            else printf "%-14s %-9s %s\n", lead, "baseline", (cnt[b, "lost"] ? "n/a (" median(b, "lost") " events lost)" : na(b))
            lead = ""
        }
        if (fe != "" && hb) printf "%-14s %-9s %12.0f %16.0f %16.0f   %-16s %-28s %-9s %s\n", lead, "fastpmix", fe, median(f, "srv_cpu"), median(f, "cli_cpu"), ratio(fe, oe), ratio(median(o, "srv_cpu"), median(f, "srv_cpu")), ratio(fe, be), ratio(median(f, "srv_cpu"), median(b, "srv_cpu"))
        else if (fe != "") printf "%-14s %-9s %12.0f %16.0f %16.0f   %-16s %s\n", lead, "fastpmix", fe, median(f, "srv_cpu"), median(f, "cli_cpu"), ratio(fe, oe), ratio(median(o, "srv_cpu"), median(f, "srv_cpu"))
        else printf "%-14s %-9s %s\n", lead, "fastpmix", (cnt[f, "lost"] ? "n/a (" median(f, "lost") " events lost)" : na(f))
        if (row ~ /^tput-relay-/) relayrows = 1
    }
    if (hdr) printf "client CPU is per receiver per event; CPU times include every thread of the process (getrusage)\n"
    if (relayrows) printf "tput-relay-N: client 0 notifies back to back (range LOCAL, same window), the server relays each event to N other clients; client CPU: the receivers'\n"
    if (hdr && hb) printf "fastpmix/baseline: events/s above 1 = faster, server CPU above 1 = more CPU per event than the baseline\n"

    # Server CPU per relayed event: client -> server -> client, one at a
    # time (c2c-local, c2c-ns) and back to back (tput-relay-N)
    hdr = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row !~ /^(c2c-local|c2c-ns|tput-relay-[0-9]+)$/) continue
        if (!cnt[row SUBSEP "fastpmix", "srv_cpu"] && !cnt[row SUBSEP "baseline", "srv_cpu"] && !cnt[row SUBSEP "openpmix", "srv_cpu"]) continue
        if (!hdr++) {
            printf "\nServer CPU per relayed event (client -> server -> client; the server process's CPU time, every thread, getrusage, in ns per event)\n"
            if (hb) printf "%-14s %-9s %16s   %-18s %s\n", "scenario", "lib", "server CPU ns/ev", "OpenPMIx/fastpmix", "fastpmix/baseline"
            else printf "%-14s %-9s %16s   %s\n", "scenario", "lib", "server CPU ns/ev", "OpenPMIx/fastpmix"
        }
        lead = row
        for (li = 1; li <= 3; li++) {
            lib = li == 1 ? "openpmix" : li == 2 ? "baseline" : "fastpmix"
            if (!(lib in libseen)) continue
            k = row SUBSEP lib
            c = median(k, "srv_cpu")
            if (c == "") { printf "%-14s %-9s %s\n", lead, lib, (cnt[k, "lost"] ? "n/a (" median(k, "lost") " events lost)" : (k in fail) ? na(k) : "n/a (not measured)"); lead = ""; continue }
            if (lib != "fastpmix") printf "%-14s %-9s %16.0f\n", lead, lib, c
            else if (hb) printf "%-14s %-9s %16.0f   %-18s %s\n", lead, lib, c, ratio(median(row SUBSEP "openpmix", "srv_cpu"), c), ratio(c, median(row SUBSEP "baseline", "srv_cpu"))
            else printf "%-14s %-9s %16.0f   %s\n", lead, lib, c, ratio(median(row SUBSEP "openpmix", "srv_cpu"), c)
            lead = ""
        }
    }
    if (hdr) printf "c2c-*: one event at a time, over the whole run (warm-up included), so a server that sleeps between events pays its wake-up in every event; tput-relay-N: back to back, per event sent (each relayed to N)\n"

    # syscalls: per family (sys: back to back; sysgap: 1 ms apart; sysown:
    # back to back, the rank bound to one CPU and fastpmix's progress
    # thread placed by its auto rule, on a core it owns), the two K rows:
    # (count(K2) - count(K1)) / (K2 - K1)
    nf = split("sys sysgap sysown", fams, " ")
    fname["sys"] = "back to back"; fname["sysgap"] = "1 ms apart"; fname["sysown"] = "owns a core"
    shown = 0
    for (fi = 1; fi <= nf; fi++) {
        fam = fams[fi]; k1[fam] = k2[fam] = ""
        for (r = 1; r <= nrows; r++) {
            row = order[r]
            if (index(row, fam "-") != 1 || substr(row, length(fam) + 2) !~ /^[0-9]+$/) continue
            kk = substr(row, length(fam) + 2) + 0
            if (k1[fam] == "" || kk < k1[fam]) k1[fam] = kk
            if (k2[fam] == "" || kk > k2[fam]) k2[fam] = kk
        }
    }
    split("server client", roles, " ")
    for (ri = 1; ri <= 2; ri++) {
        role = roles[ri]
        for (fi = 1; fi <= nf; fi++) {
            fam = fams[fi]
            if (k1[fam] == "" || k2[fam] <= k1[fam]) continue
            if (!shown++) {
                printf "\nSyscalls per event per process (strace -c -f attached to each process, (K=%d - K=%d)/%d, scenario s2c)\n", k2[fam], k1[fam], k2[fam] - k1[fam]
                printf "%-8s %-14s %-9s %10s   %s%s\n", "role", "events", "lib", "syscalls", "OpenPMIx/fastpmix", (hb ? "   fastpmix/baseline" : "")
            }
            per["openpmix"] = per["baseline"] = per["fastpmix"] = ""
            first = 1
            for (li = 1; li <= 3; li++) {
                lib = li == 1 ? "openpmix" : li == 2 ? "baseline" : "fastpmix"
                if (lib != "fastpmix" && !(lib in libseen)) continue
                a = fam "-" k1[fam] SUBSEP lib; b = fam "-" k2[fam] SUBSEP lib
                c1 = median(a, role); c2 = median(b, role)
                lead = sprintf("%-8s %-14s", (first && fi == 1 ? role : ""), (first ? fname[fam] : ""))
                first = 0
                if (c1 == "" || c2 == "" || c1 < 0 || c2 < 0) { printf "%s %-9s %s\n", lead, lib, na((b in fail) ? b : a); per[lib] = ""; continue }
                per[lib] = (c2 - c1) / (k2[fam] - k1[fam])
                # the constant counts (attach, detach) differ by a few calls;
                # a smaller run that counted many more is noise, not a result
                if (per[lib] < -0.01) { printf "%s %-9s %s\n", lead, lib, "n/a (the run of " k1[fam] " events counted " c1 ", the run of " k2[fam] " " c2 ")"; per[lib] = ""; continue }
                if (per[lib] < 0) per[lib] = 0
                if (role == "client" && lib == "fastpmix") clisys[fam] = per[lib]
                rt = ""
                if (lib == "fastpmix") rt = (per["fastpmix"] < 0.05 ? "(fastpmix ~0)" : ratio(per["openpmix"], per["fastpmix"]))
                if (lib == "fastpmix" && hb) rt = sprintf("%-17s   %s", rt, (per["baseline"] == "" ? "-" : per["baseline"] < 0.05 && per["fastpmix"] < 0.05 ? "(both ~0)" : ratio(per["fastpmix"], per["baseline"])))
                printf "%s %-9s %10.2f   %s\n", lead, lib, per[lib], rt
            }
        }
    }
    if (shown) printf "the harness makes none per event here (receivers ack by a plain store, the server spins on it); per-syscall lists: strace/\n"
    if (shown && k1["sysown"] != "") printf "owns a core: back to back, the receiving rank bound to one CPU; fastpmix's auto rule puts its progress thread on the other, which may then spin; (K=%d - K=%d)/%d, counted by perf's syscall tracepoint, not strace, whose stop at every syscall makes the machine look oversubscribed to a spin policy\n", k2["sysown"], k1["sysown"], k2["sysown"] - k1["sysown"]

    # The performance targets (docs/performance.md), for the rows this run has (memory is not measured here)
    nt = 0
    target("server -> client p50 >= 4x OpenPMIx", faster("s2c"), 4, ">=")
    target("server -> client p50 <= 1.3x the floor", div(median("s2c" SUBSEP "fastpmix", "p50"), floor), 1.3, "<=")
    target("  ... against the floor of its kind of wake-up", kindratio("s2c"), 1.3, "<=")
    target("client -> client LOCAL p50 >= 6x OpenPMIx", faster("c2c-local"), 6, ">=")
    target("client -> client NAMESPACE p50 >= 6x OpenPMIx", faster("c2c-ns"), 6, ">=")
    target("fan-out to 16, last handler, p50 >= 4x OpenPMIx", faster("fanout-16"), 4, ">=")
    # what fastpmix would get if it added nothing to the kernel's wake-up
    # of 16 processes: whether 4x was attainable at all in this run
    ffbound = div(median("fanout-16" SUBSEP "openpmix", "p50"), median("floor-fanout-16" SUBSEP "futex", "p50"))
    bound("  ... bound: OpenPMIx p50 / floor-fanout-16 p50", ffbound)
    target("throughput to 1 client >= 10x OpenPMIx", div(median("tput-1" SUBSEP "fastpmix", "evps"), median("tput-1" SUBSEP "openpmix", "evps")), 10, ">=")
    target("throughput to 1 client >= 1 M events/s", div(median("tput-1" SUBSEP "fastpmix", "evps"), 1000000), 1, ">=")
    target("server CPU per event to 1 client >= 10x lower", div(median("tput-1" SUBSEP "openpmix", "srv_cpu"), median("tput-1" SUBSEP "fastpmix", "srv_cpu")), 10, ">=")
    target("syscalls per event per receiver <= 1, back to back", clisys["sys"], 1.005, "<=")
    target("syscalls per event per receiver <= 1, 1 ms apart", clisys["sysgap"], 1.005, "<=")
    target("syscalls per event per receiver, awake: 0", clisys["sysown"], 0.005, "<=")
    target("PROC_LOCAL, in the notifying thread, p50 <= 1 us", div(median("proclocal-inline" SUBSEP "fastpmix", "p50"), 1000), 1, "<=")
    target("registration for an active code <= 2 us", div(median("reg-active" SUBSEP "fastpmix", "p50"), 1000), 2, "<=")
    target("register+deregister, active code <= 2 us", div(median("regdereg-active" SUBSEP "fastpmix", "p50"), 1000), 2, "<=")
    target("register+deregister, active code >= 2x OpenPMIx", faster("regdereg-active"), 2, ">=")
    target("the same with 10,000 handlers registered <= 2 us", div(median("regdereg-active-10k" SUBSEP "fastpmix", "p50"), 1000), 2, "<=")
    target("Get of a peer's committed key p50 <= 1 us", div(median("get" SUBSEP "fastpmix", "p50"), 1000), 1, "<=")
    target("Get of a peer's committed key p50 >= 10x OpenPMIx", faster("get"), 10, ">=")
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row ~ /^fence-[0-9]+$/) {
            target(sprintf("fence N=%s p50 >= 4x OpenPMIx", substr(row, 7)), faster(row), 4, ">=")
            # a fence ends by waking its N ranks: the ratio of a library
            # whose fence cost nothing but that wake-up
            fb = div(median(row SUBSEP "openpmix", "p50"), median("floor-fanout-" substr(row, 7) SUBSEP "futex", "p50"))
            bound("  ... bound: OpenPMIx p50 / floor-fanout-" substr(row, 7) " p50", fb)
            if (fb != "") fbounds = 1
        }
        if (row ~ /^fence-collect-[0-9]+$/) target(sprintf("fence N=%s with data collection p50 >= 4x OpenPMIx", substr(row, 15)), faster(row), 4, ">=")
        if (row ~ /^wireup-[0-9]+$/) target(sprintf("wire-up N=%s >= 5x OpenPMIx", substr(row, 8)), div(median(row SUBSEP "openpmix", "first"), median(row SUBSEP "fastpmix", "first")), 5, ">=")
    }
    if (nt) printf "(the ratios are this run's medians; the kind of wake-up: see \"Where the last handler ran\")\n"
    if (fbounds) printf "(fence bound: the ratio of a library whose fence cost nothing but waking its N ranks, floor-fanout-N; the entrant's wake-up of the server comes on top)\n"
    if (ffbound != "") printf "(bound: the fan-out-16 ratio fastpmix would have if it added nothing to the kernel's wake-up of 16 sleeping processes, floor-fanout-16; 4x is attainable by receivers that sleep only when the bound is at least 4)\n"

    # Against the baseline: per row its measures, fastpmix over the
    # baseline, and which way it went (beyond 5 % either way)
    nb = nworse = 0; worse = ""
    for (r = 1; r <= nrows && hb; r++) {
        row = order[r]
        if (row ~ /^(floor|sys|sysgap|sysown)/) continue
        if (isscale(row)) {
            if (row ~ /^startup-/) { against(row, "start-up-ns", "total", 1); against(row, "init-cpu-ns", "init_cpu", 1) }
            if (row ~ /^reg-/) { against(row, "p50-us", "p50", 1); against(row, "all-ns", "all", 1) }
            if (row ~ /^mem-/) { against(row, "RSS-KiB", "rss", 1); against(row, "private-KiB", "private", 1); against(row, "shm-KiB", "shm_alloc", 1) }
            continue
        }
        if (row ~ /^tput-/) { against(row, "events/s", "evps", -1); against(row, "server-CPU-ns/ev", "srv_cpu", 1) }
        else if (row ~ /^wireup-/) { against(row, "first-ns", "first", 1); against(row, "again-ns", "again", 1) }
        else if (row ~ /^steal-/) { against(row, "lib-CPU-ms/min", "cpu", 1); against(row, "compute-ratio", "ratio", -1) }
        else { against(row, "p50-us", "p50", 1); against(row, "p99-us", "p99", 1); if (row ~ /^c2c-/) against(row, "server-CPU-ns/ev", "srv_cpu", 1) }
    }
    if (nb) printf "%d of %d measures worse than the baseline (beyond 5 %%, the rounds agreeing)%s\n", nworse, nb, (nworse ? ": " worse : "")
}

# One line of "Against the baseline": `key` of a row, fastpmix over
# baseline; `dir` 1: lower is better (latency, CPU), -1: higher (events/s).
# A verdict needs two things: the medians 5 % apart, and the rounds agreeing
# (the same round's two runs, interleaved, paired: a sign test, one-sided
# p < 0.05). On a shared 2-core VM the same library run twice moves some
# medians by 10-18 % over 16 rounds; the pairing tells that from a change.
function against(row, what, key, dir,    bv, fv, q, verdict, shown, sv, r, kb, kf, b1, f1, n, up, down, p) {
    bv = median(row SUBSEP "baseline", key); fv = median(row SUBSEP "fastpmix", key)
    if (bv == "" && fv == "") return
    if (!nb++) {
        printf "\nAgainst the baseline %s (median across rounds; ratio fastpmix/baseline; worse/better: medians beyond 5 %% apart and the rounds agreeing: in how many of the rounds that ran both fastpmix was worse, one-sided sign test p < 0.05; else same)\n", (baseline != "" ? baseline : "")
        printf "%-14s %-17s %12s %12s %9s  %-13s %s\n", "scenario", "measure", "baseline", "fastpmix", "ratio", "rounds worse", "verdict"
    }
    if (bv == "" || fv == "" || bv + 0 <= 0) {
        printf "%-14s %-17s %12s %12s %9s  %-13s %s\n", row, what, (bv == "" ? "n/a" : bv), (fv == "" ? "n/a" : fv), "-", "-", "n/a"
        return
    }
    q = fv / bv
    kb = row SUBSEP "baseline"; kf = row SUBSEP "fastpmix"
    n = up = down = 0
    for (r = 1; r <= nrounds; r++) {
        if (!rcnt[kb, key, rounds[r]] || !rcnt[kf, key, rounds[r]]) continue
        b1 = rsum[kb, key, rounds[r]] / rcnt[kb, key, rounds[r]]
        f1 = rsum[kf, key, rounds[r]] / rcnt[kf, key, rounds[r]]
        n++
        if (dir * (f1 - b1) > 0) up++
        else if (dir * (f1 - b1) < 0) down++
    }
    verdict = "same"
    if (dir * (q - 1) > 0.05 && signp(n, up) < 0.05) verdict = "WORSE"
    else if (dir * (q - 1) < -0.05 && signp(n, down) < 0.05) verdict = "better"
    if (verdict == "WORSE") { nworse++; worse = worse (worse == "" ? "" : ", ") row " " what }
    shown = (key ~ /^p[0-9]+$/) ? us(bv) SUBSEP us(fv) : sprintf("%.0f", bv) SUBSEP sprintf("%.0f", fv)
    split(shown, sv, SUBSEP)
    printf "%-14s %-17s %12s %12s %8.2fx  %-13s %s\n", row, what, sv[1], sv[2], q, up " of " n, verdict
}

# P(X >= k) for X ~ Binomial(n, 1/2): how likely k or more of n paired
# rounds go one way when neither library is faster (1 when n is 0).
function signp(n, k,    i, c, p) {
    if (n == 0) return 1
    p = 0; c = 1
    for (i = 0; i <= n; i++) {
        if (i >= k) p += c
        c = c * (n - i) / (i + 1)
    }
    return p / (2 ^ n)
}

# a / b, or "" when either is missing
function div(a, b) { return (a == "" || b == "" || b + 0 <= 0) ? "" : a / b }

# OpenPMIx p50 / fastpmix p50 of a row
function faster(row) { return div(median(row SUBSEP "openpmix", "p50"), median(row SUBSEP "fastpmix", "p50")) }

# a row's p50 against the floor of the kind most of its events had
function kindratio(row,    k, sm) {
    k = row SUBSEP "fastpmix"
    sm = median(k, "same")
    if (sm == "") return ""
    return sm + 0 >= 0.5 ? div(median(k, "p50same"), fsame) : div(median(k, "p50other"), fother)
}

# an informative line of the targets section: a value, no verdict
function bound(what, v) {
    if (v == "") return
    if (!nt++) printf "\nTargets (this run)\n"
    printf "  %-52s %8.2f   %s\n", what, v, "bound, no verdict"
}

function target(what, v, limit, op,    ok) {
    if (v == "") return
    if (!nt++) printf "\nTargets (this run)\n"
    ok = (op == ">=") ? (v + 0 >= limit) : (v + 0 <= limit)
    printf "  %-52s %8.2f   %s\n", what, v, ok ? "holds" : "MISSED"
}

# Data exchange rows (tools/pmix-compare/data.c)
function isdata(row) { return row ~ /^(get|fence-[0-9]+|fence-collect-[0-9]+|wireup-[0-9]+)$/ }

function ms(ns) {
    if (ns == "") return "-"
    ns /= 1e6
    return ns < 10 ? sprintf("%.2f", ns) : ns < 100 ? sprintf("%.1f", ns) : sprintf("%.0f", ns)
}

# get, fence-N, fence-collect-N: the latency section's columns (no
# fan-out floor); wireup-N: the first exchange and the repeats, in ms.
function datasections(    r, row, hdr, o, f, b, op50, fp50, bp50, lead, of, ff, bf, bad0) {
    bad0 = anybad; anybad = 0
    hdr = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (!isdata(row) || row ~ /^wireup-/) continue
        if (!hdr++) {
            printf "\nData exchange: PMIx_Get of a peer's committed key, one at a time; PMIx_Fence, per fence from the last rank's entry to the last rank's exit (microseconds; median across rounds of each run's percentiles)\n"
            pl(sprintf(sc " %-9s %10s %10s %10s   %-18s %-15s%s", "scenario", "lib", "p50", "p90", "p99", "OpenPMIx/fastpmix", "fastpmix/floor", (hb ? " fastpmix/baseline" : "")))
        }
        o = row SUBSEP "openpmix"; f = row SUBSEP "fastpmix"; b = row SUBSEP "baseline"
        op50 = median(o, "p50"); fp50 = median(f, "p50"); bp50 = median(b, "p50")
        lead = other_libs(row, sc, ho, hb)
        if (!hf) continue
        if (fp50 != "") pl(sprintf(sc " %-9s %10s %10s %10s   %-18s %-15s%s%s", lead, "fastpmix", us(fp50), us(median(f, "p90")), us(median(f, "p99")), ratio(op50, fp50), ratio(fp50, floor), (hb ? " " ratio(fp50, bp50) : ""), badnote(f)))
        else printf sc " %-9s %s\n", lead, "fastpmix", na(f)
    }
    if (hdr) printf "a fence's ranks enter it back to back; with collection every rank committed 4 keys before the first, so each fence collects them again\n"
    hdr = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row !~ /^wireup-/) continue
        if (!hdr++) {
            printf "\nWire-up: N ranks each put 4 keys, commit, fence with PMIX_COLLECT_DATA, get every peer's keys (milliseconds from the first rank's start to the last rank's end; median across rounds)\n"
            pl(sprintf("%-14s %-9s %10s %10s   %-18s%s", "scenario", "lib", "first", "again", "OpenPMIx/fastpmix", (hb ? " fastpmix/baseline" : "")))
        }
        o = row SUBSEP "openpmix"; f = row SUBSEP "fastpmix"; b = row SUBSEP "baseline"
        of = median(o, "first"); ff = median(f, "first"); bf = median(b, "first")
        lead = row
        if (ho) {
            if (of != "") printf "%-14s %-9s %10s %10s%s\n", lead, "openpmix", ms(of), ms(median(o, "again")), badnote(o)
            else printf "%-14s %-9s %s\n", lead, "openpmix", na(o)
            lead = ""
        }
        if (hb) {
            if (bf != "") printf "%-14s %-9s %10s %10s%s\n", lead, "baseline", ms(bf), ms(median(b, "again")), badnote(b)
            else printf "%-14s %-9s %s\n", lead, "baseline", na(b)
            lead = ""
        }
        if (!hf) continue
        if (ff != "") pl(sprintf("%-14s %-9s %10s %10s   %-18s%s%s", lead, "fastpmix", ms(ff), ms(median(f, "again")), ratio(of, ff), (hb ? " " ratio(ff, bf) : ""), badnote(f)))
        else printf "%-14s %-9s %s\n", lead, "fastpmix", na(f)
    }
    if (hdr) printf "first: the job's first exchange (the row's measure, and its ratio); again: p50 of the repeats in the same job, the same keys put again; the ranks start on one FUTEX_WAKE, so their wake-up is in both\n"
    if (anybad) printf "[bad N]: N Gets returned a wrong, stale or missing value, or N fences had no sample\n"
    anybad = anybad || bad0
}

# prints a line without its trailing blanks
function pl(line) { sub(/ +$/, "", line); print line }

# Scale rows (tools/pmix-compare/scale.c): startup-N, reg-N, mem-N,
# relaycpu-N; the relay-N and fanout-N rows of the same runs are latency
# rows as well.
function isscale(row) { return row ~ /^(startup|mem|relaycpu)-[0-9]+$/ || row ~ /^reg-[0-9]+$/ }

# One measure of the scale section at every N: `key` of rows PREFIX-N,
# `minus` (a key) subtracted when given, scaled by `div`; `kind` "total"
# (a time or a whole: at most linear is at most 2x per doubling of N) or
# "client" (per client: at most linear in total is at most 1x). Lines for
# each library that has it; the fastpmix line ends with OpenPMIx/fastpmix
# at the largest N.
function scaleline(label, prefix, key, minus, per, kind, fmt,    li, lib, i, n, x, m, prev, line, r, worst, has, verdict, lead, ov, fv) {
    lead = label
    for (li = 1; li <= 4; li++) {
        lib = li == 1 ? "openpmix" : li == 2 ? "baseline" : li == 3 ? "fastpmix" : "futex"
        if (!(lib in libseen)) continue
        has = 0; worst = ""; prev = ""; line = ""
        for (i = 1; i <= nsn; i++) {
            n = sn[i]
            x = median(prefix "-" n SUBSEP lib, key)
            if (x != "" && minus != "") { m = median(prefix "-" n SUBSEP lib, minus); x = (m == "" ? "" : x - m) }
            if (x != "" && x + 0 < 0) x = ""
            if (x != "") { has = 1; x = x / per }
            line = line sprintf(" %9s", x == "" ? "-" : fmt == "kib" ? sprintf("%.0f", x) : fmt == "us" ? us(x * 1000) : ms(x * 1e6))
            if (i > 1) {
                r = (x == "" || prev == "" || prev + 0 <= 0) ? "" : x / prev
                line = line sprintf(" %7s", r == "" ? "-" : sprintf("%.2fx", r))
                # per doubling of N, whatever the step between two N
                if (r != "") { r = r / (kind == "total" ? sn[i] / sn[i - 1] : 1); if (worst == "" || r > worst) worst = r }
            }
            prev = x
            if (lib == "openpmix") ov = x
            if (lib == "fastpmix") fv = x
        }
        if (!has) continue
        # 15 % for noise; a fan-out, or the registration of all N (one
        # command wakes them), that grows no faster than the kernel's own
        # wake-up of as many processes (floor-fanout-N) is "<=floor"
        verdict = worst == "" ? "-" : worst <= 1.15 ? "<=linear" : "SUPERLINEAR"
        if (verdict == "SUPERLINEAR" && (prefix == "fanout" || key == "all") && ffworst != "" && worst <= ffworst * 1.15) verdict = "<=floor"
        if (prefix == "floor-fanout") { ffworst = worst; verdict = (worst == "" ? "-" : sprintf("(%.2f)", worst * 2)) }
        if (verdict == "SUPERLINEAR") superlin = superlin (superlin == "" ? "" : ", ") label " (" lib ")"
        if (verdict == "<=floor") floorlike = floorlike (floorlike == "" ? "" : ", ") label " (" lib ")"
        printf "%-44s %-9s%s   %-11s %s\n", lead, lib, line, verdict, (lib == "fastpmix" && ho ? ratio(ov, fv) : "")
        lead = ""
    }
}

function scalesection(    r, row, n, i, j, t, c, cores) {
    nsn = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row !~ /^(startup|reg|mem)-[0-9]+$/) continue
        n = substr(row, index(row, "-") + 1) + 0
        if (n in snseen) continue
        snseen[n] = 1; sn[++nsn] = n
    }
    if (!nsn) return
    for (i = 2; i <= nsn; i++) { t = sn[i]; for (j = i - 1; j >= 1 && sn[j] > t; j--) sn[j + 1] = sn[j]; sn[j + 1] = t }
    cores = ""
    for (i = 1; i <= nsn && cores == ""; i++)
        for (c = 1; c <= 4 && cores == ""; c++)
            cores = median("startup-" sn[i] SUBSEP (c == 1 ? "fastpmix" : c == 2 ? "openpmix" : "baseline"), "cores")
    printf "\nScale: N local clients%s (N = %s", (cores != "" ? sprintf(" on %d cores, heavily oversubscribed", cores) : ""), sn[1]
    for (i = 2; i <= nsn; i++) printf ", %s", sn[i]
    if (cores != "") printf ": %g to %g clients per core", sn[1] / cores, sn[nsn] / cores
    printf "; median across the runs (rounds, and the jobs of a round); xR: the value over the one at the N before)\n"
    printf "%-44s %-9s", "measure", "lib"
    for (i = 1; i <= nsn; i++) printf " %9s%s", "N=" sn[i], (i > 1 ? sprintf(" %7s", "x" sn[i] / sn[i - 1]) : "")
    printf "   %-11s %s\n", "growth", (ho ? "OpenPMIx/fastpmix at N=" sn[nsn] : "")
    superlin = ""; floorlike = ""; ffworst = ""
    scaleline("start-up: start word -> last Init (ms)", "startup", "total", "", 1e6, "total", "ms")
    scaleline("PMIx_Init per rank, p50 (ms)", "startup", "init_p50", "", 1e6, "total", "ms")
    scaleline("PMIx_Init CPU per rank, p50 (ms)", "startup", "init_cpu", "", 1e6, "client", "ms")
    scaleline("server CPU during start-up (ms)", "startup", "srv_cpu", "", 1e6, "total", "ms")
    scaleline("floor-fanout p50, no PMIx (us)", "floor-fanout", "p50", "", 1e3, "total", "us")
    scaleline("fan-out, last handler p50 (us)", "fanout", "p50", "", 1e3, "total", "us")
    scaleline("relay rank 0 -> rank 1, p50 (us)", "relay", "p50", "", 1e3, "client", "us")
    scaleline("server CPU per relayed event (us)", "relaycpu", "srv_cpu", "", 1e3, "client", "us")
    scaleline("register one handler, p50 per call (us)", "reg", "p50", "", 1e3, "total", "us")
    scaleline("register, all N ranks (ms)", "reg", "all", "", 1e6, "total", "ms")
    scaleline("RSS before PMIx_Init, per client (KiB)", "mem", "rss0", "", 1, "client", "kib")
    scaleline("RSS per client (KiB)", "mem", "rss", "", 1, "client", "kib")
    scaleline("private part per client (KiB)", "mem", "private", "", 1, "client", "kib")
    scaleline("shared part per client (KiB)", "mem", "shared", "", 1, "client", "kib")
    scaleline("PSS per client (KiB)", "mem", "pss", "", 1, "client", "kib")
    scaleline("library shared memory / N (KiB)", "mem", "shm_alloc", "", 1, "client", "kib")
    scaleline("server RSS growth since before init (KiB)", "mem", "srv_rss", "srv_rss0", 1, "total", "kib")
    printf "growth: the worst ratio per doubling of N against linear (a time or a whole: 2x; a per-client value: 1x), 15 %% allowed for noise: <=linear, else SUPERLINEAR; <=floor: faster than linear, but not beyond the kernel's own wake-up of N sleeping processes, whose worst ratio per doubling is floor-fanout's (in parentheses): the fan-out, and the registration of all N (one command wakes them all)\n"
    if (superlin == "" && floorlike == "") printf "no measure grows faster than linearly in N\n"
    else if (superlin == "") printf "no measure grows faster than linearly in N, except as the kernel's wake-up of N processes does: %s\n", floorlike
    else printf "faster than linearly in N: %s%s\n", superlin, (floorlike != "" ? "; as the kernel's wake-up of N processes: " floorlike : "")
    printf "every rank forked and exec'd before the start word; Init per rank and registration per call include waiting for a CPU behind the other ranks; relay: rank 0 notifies rank 1 alone (PMIX_RANGE_CUSTOM) while N - 2 ranks stay attached and idle, one event at a time; its server CPU is the server process's CPU time minus its main thread's, per event (the progress thread's wake-up included); memory after PMIx_Init and one registration (VmRSS, smaps_rollup: p50 over the ranks); library shared memory: the server's /dev/shm objects and files under its PMIX_SERVER_TMPDIR, allocated blocks\n"
}

# The busy node (tools/pmix-compare/busy.c): busy-* rows, latency while a
# rank computes on every core; steal-* rows, the CPU the library threads
# take from them. Every cell is printed ("-" when it does not apply), one
# token each, so that tools/bench-plot reads the columns from the header.
function isbusy(row) { return row ~ /^(busy|steal)-/ }

# a median as "%.Nf", or "-" when missing or negative (not applicable)
function cell(k, name, fmt,    x) {
    x = median(k, name)
    return (x == "" || x + 0 < 0) ? "-" : sprintf(fmt, x)
}

function pct1(k, name,    x) {
    x = median(k, name)
    return x == "" ? "-" : sprintf("%.1f%%", 100 * x)
}

function busysections(    r, row, hdr, li, lib, k, lead, op50, fp50, ranks, cpus, win, lk, o, f) {
    hdr = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row !~ /^busy-/) continue
        if (!hdr++) {
            printf "\nBusy node: a rank bound to every core computes without sleeping while events arrive; latency notify -> handler entry (microseconds; median across rounds of each run's percentiles)\n"
            pl(sprintf("%-14s %-9s %10s %10s %10s   %-17s %-14s %14s %16s %14s %11s", "scenario", "lib", "p50", "p90", "p99", "OpenPMIx/fastpmix", "fastpmix/floor", "receiver_lib_CPU_ms/min", "other_ranks_lib_CPU_ms/min", "server_CPU_ms/min", "compute_CPU_share"))
        }
        op50 = median(row SUBSEP "openpmix", "p50"); fp50 = median(row SUBSEP "fastpmix", "p50")
        lead = row
        for (li = 1; li <= 3; li++) {
            lib = li == 1 ? "openpmix" : li == 2 ? "baseline" : "fastpmix"
            if (!(lib in libseen)) continue
            k = row SUBSEP lib
            if (ranks == "") ranks = median(k, "ranks")
            if (cpus == "") cpus = median(k, "cpus")
            if (median(k, "p50") == "") { printf "%-14s %-9s %s\n", lead, lib, na(k); lead = ""; continue }
            pl(sprintf("%-14s %-9s %10s %10s %10s   %-17s %-14s %14s %16s %14s %11s%s", lead, lib, us(median(k, "p50")), us(median(k, "p90")), us(median(k, "p99")), (lib == "fastpmix" ? ratio(op50, fp50) : "-"), (lib == "fastpmix" ? ratio(fp50, floor) : "-"), cell(k, "rx_cpu", "%.1f"), cell(k, "other_cpu", "%.1f"), cell(k, "srv", "%.1f"), pct1(k, "main"), badnote(k)))
            lead = ""
        }
    }
    if (hdr) {
        printf "%s ranks on %s online CPUs, each bound to its own before PMIx_Init (PMIX_LOCAL_CPUSETS registered, as a launcher that binds ranks does), compute a floating-point loop that never sleeps: the node is oversubscribed by the host (the bench parent, its own PMIx server; it notifies, then sleeps) and by every client's library threads; no CPU idles, so no woken thread waits for a halted CPU (the cpuidle setting above does not come into it): it takes the CPU from a computing rank\n", (ranks == "" ? "N" : ranks), (cpus == "" ? "the" : cpus)
        printf "busy-s2c: host -> rank 1; busy-c2c-local, busy-c2c-ns: rank 0's main thread notifies between compute steps (range LOCAL, NAMESPACE) -> rank 1 through the server; busy-fanout: host -> every rank, the last handler; a rank that is not a receiver registers no handler; events 250-750 us apart, so the receivers' threads sleep in between\n"
        printf "the handler runs on a library thread while the rank's main thread computes: fastpmix, the client's progress thread, which reads the shared-memory ring and sleeps on a futex; OpenPMIx, the client's progress thread (libevent), which reads the socket\n"
        printf "lib CPU: the CPU time of a rank's threads but the main one (/proc/self/task/*/schedstat), ms per minute, the receivers' and the other ranks' (no handler, or busy-c2c's sender); server: the host process, every thread; compute share: the main threads' CPU time over wall time (other work on the machine lowers it too)\n"
    }

    hdr = 0
    for (r = 1; r <= nrows; r++) {
        row = order[r]
        if (row !~ /^steal-/) continue
        if (!hdr++) {
            printf "\nRuntime CPU taken from compute: a rank bound to every core computes without sleeping; per rank the CPU time of its library threads, and the compute loop's pace against the same rank's before PMIx_Init (median across rounds)\n"
            pl(sprintf("%-14s %-9s %14s %9s %12s %12s %8s %11s %10s %14s %9s   %-17s %s", "scenario", "lib", "lib_CPU_ms/min", "max_rank", "compute_vs_no_PMIx", "per_compute_CPU_second", "runs", "compute_CPU_share", "other_work", "server_CPU_ms/min", "events/s", "lib_CPU_OpenPMIx/fastpmix", "server_CPU_OpenPMIx/fastpmix"))
        }
        o = row SUBSEP "openpmix"; f = row SUBSEP "fastpmix"
        lead = row
        for (li = 1; li <= 3; li++) {
            lib = li == 1 ? "openpmix" : li == 2 ? "baseline" : "fastpmix"
            if (!(lib in libseen)) continue
            k = row SUBSEP lib
            if (ranks == "") ranks = median(k, "ranks")
            if (win == "") win = median(k, "win_ms")
            if (median(k, "cpu") == "") { printf "%-14s %-9s %s\n", lead, lib, na(k); lead = ""; continue }
            lk = (lib == "fastpmix")
            pl(sprintf("%-14s %-9s %14s %9s %12s %12s %8s %11s %10s %14s %9s   %-17s %s%s", lead, lib, cell(k, "cpu", "%.2f"), cell(k, "cpu_max", "%.2f"), cell(k, "ratio", "%.3f"), cell(k, "ratio_cpu", "%.3f"), sprintf("%d/%d", cnt[k, "ratio"], cnt[k, "clean"]), pct1(k, "main"), pct1(k, "foreign_max"), cell(k, "srv", "%.1f"), cell(k, "evps", "%.0f"), (lk ? ratio(median(o, "cpu"), median(f, "cpu")) : "-"), (lk ? ratio(median(o, "srv"), median(f, "srv")) : "-"), badnote(k)))
            lead = ""
        }
    }
    if (hdr) {
        printf "%s ranks, one per core, as in the busy rows; each phase %s s: steal-idle, no events; steal-1k, the host notifies every rank (range LOCAL) 1,000 times a second (clock_nanosleep to absolute deadlines), the handler counts; before PMIx_Init the same ranks computed as long with no PMIx at all\n", (ranks == "" ? "N" : ranks), (win == "" ? "-" : sprintf("%.1f", win / 1000))
        printf "lib CPU: per rank, every thread but the main one (/proc/self/task/*/schedstat), ms per minute of wall time, mean over ranks (max_rank: the most); fastpmix's are its progress, control and callback threads, OpenPMIx's its progress thread\n"
        printf "compute vs no PMIx: the main thread's compute steps per second of wall time over the same rank's before PMIx_Init, mean over ranks: it counts every CPU the rank's core lost, to its library threads, to the server, to other work on the machine; median of the runs in which other work (and the kernel) took at most 5 %% of the ranks' CPUs, in the phase and before PMIx_Init (runs: counted/all; other_work: the larger of the two shares, median); per compute CPU second: the same per second of the main thread's CPU time, what is left when no CPU is lost (cache and TLB effects), every run\n"
    }
}
