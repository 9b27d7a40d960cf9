/*
 * A C++17 PMIx client: pmix.h from C++ (g++ -std=c++17 -Wall -Wextra
 * -Werror -pedantic), run as a 2-process job: `fastpmix run -n 2 cxx_client`.
 * Handlers and callbacks are captureless lambdas converted to the C function
 * pointer types; waits use std::condition_variable, std::atomic and
 * std::future, each with a hang guard (never a timing assertion).
 * tests/c_cxx.rs checks what it prints:
 *   sizes proc= value= info=
 *   get rank rc= value= matches_init=        PMIx_Get, value held by a unique_ptr
 *   get job_size rc= value=
 *   threads_get ok= of=                       PMIx_Get from 4 std::threads at once
 *   register_nb rc= cb_status= ref_ok=        non-blocking, reference via a promise
 *   register_blocking ref=
 *   deregister_nb rc= cb_status=
 *   fence rc=
 *   notify_dropped rc= / notify rc=           (rank 0) the deregistered code, then ours
 *   event status= source_rank= same_nspace= text= payload= ref_matches= calls=
 *   dropped_calls=                            the deregistered handler never ran
 *   fence_nb rc= cb_status=
 *   finalize rc=
 *   done
 */
#include <pmix.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr pmix_status_t kCode = PMIX_EXTERNAL_ERR_BASE - 88;    // the handler we keep
constexpr pmix_status_t kDropped = PMIX_EXTERNAL_ERR_BASE - 89; // deregistered before use
constexpr auto kHang = std::chrono::seconds(30);

static_assert(sizeof(pmix_proc_t) == 260, "pmix_proc_t layout");
static_assert(sizeof(pmix_value_t) == 32, "pmix_value_t layout");
static_assert(sizeof(pmix_info_t) == 552, "pmix_info_t layout");
static_assert(offsetof(pmix_info_t, value) == 520, "pmix_info_t::value offset");

pmix_proc_t me;

void say(const std::string &line)
{
    static std::mutex out_lock;
    std::lock_guard<std::mutex> g(out_lock);
    std::cout << line << std::endl;
}

[[noreturn]] void fail(const std::string &what)
{
    say("FAIL " + what);
    std::exit(1);
}

// What the kept handler saw; guarded by the mutex, signalled by the cv.
struct Seen {
    std::mutex m;
    std::condition_variable cv;
    int calls = 0;
    pmix_status_t status = 0;
    pmix_rank_t source_rank = PMIX_RANK_UNDEF;
    bool same_nspace = false;
    std::string text = "-";
    long long payload = -1;
    size_t ref = 0;
};
Seen seen;
std::atomic<int> dropped_calls{0};

// A PMIx_Get whose value is released by its owner.
struct ValueFree {
    void operator()(pmix_value_t *v) const { PMIx_Value_free(v, 1); }
};
using ValuePtr = std::unique_ptr<pmix_value_t, ValueFree>;

std::pair<pmix_status_t, ValuePtr> get(const pmix_proc_t &p, const char *key)
{
    pmix_value_t *v = nullptr;
    pmix_status_t rc = PMIx_Get(&p, key, nullptr, 0, &v);
    return {rc, ValuePtr(v)};
}

// An op callback's outcome, waited for with a condition variable.
struct OpWait {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    pmix_status_t status = 1;

    bool wait()
    {
        std::unique_lock<std::mutex> l(m);
        return cv.wait_for(l, kHang, [this] { return done; });
    }
};

const pmix_op_cbfunc_t op_done = [](pmix_status_t status, void *cbdata) {
    auto *w = static_cast<OpWait *>(cbdata);
    {
        std::lock_guard<std::mutex> g(w->m);
        w->status = status;
        w->done = true;
    }
    w->cv.notify_all();
};

} // namespace

int main()
{
    std::ostringstream s;
    s << "sizes proc=" << sizeof(pmix_proc_t) << " value=" << sizeof(pmix_value_t)
      << " info=" << sizeof(pmix_info_t);
    say(s.str());

    pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
    if (PMIX_SUCCESS != rc) {
        fail("PMIx_Init " + std::to_string(rc));
    }

    // ---- PMIx_Get ----
    {
        auto [grc, v] = get(me, PMIX_RANK);
        std::ostringstream l;
        l << "get rank rc=" << grc;
        if (PMIX_SUCCESS == grc && v) {
            l << " value=" << v->data.rank
              << " matches_init=" << (PMIX_PROC_RANK == v->type && v->data.rank == me.rank);
        }
        say(l.str());
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    {
        auto [grc, v] = get(wild, PMIX_JOB_SIZE);
        std::ostringstream l;
        l << "get job_size rc=" << grc;
        if (PMIX_SUCCESS == grc && v) {
            l << " value=" << (PMIX_UINT32 == v->type ? static_cast<long long>(v->data.uint32) : -1);
        }
        say(l.str());
    }
    {
        // The same Get from several threads at once.
        std::atomic<int> ok{0};
        constexpr int kThreads = 4, kEach = 50;
        std::vector<std::thread> ts;
        for (int t = 0; t < kThreads; t++) {
            ts.emplace_back([&ok, &wild] {
                for (int i = 0; i < kEach; i++) {
                    auto [grc, v] = get(wild, PMIX_JOB_SIZE);
                    if (PMIX_SUCCESS == grc && v && PMIX_UINT32 == v->type && 2 == v->data.uint32) {
                        ok.fetch_add(1);
                    }
                }
            });
        }
        for (auto &t : ts) {
            t.join();
        }
        say("threads_get ok=" + std::to_string(ok.load()) +
            " of=" + std::to_string(kThreads * kEach));
    }

    // ---- handlers: lambdas as pmix_notification_fn_t ----
    pmix_notification_fn_t keep = [](size_t ref, pmix_status_t status, const pmix_proc_t *source,
                                     pmix_info_t info[], size_t ninfo, pmix_info_t *,
                                     size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                                     void *cbdata) {
        std::string text = "-";
        long long payload = -1;
        for (size_t i = 0; i < ninfo; i++) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) &&
                PMIX_STRING == info[i].value.type) {
                text = info[i].value.data.string;
            } else if (PMIX_CHECK_KEY(&info[i], "cxx.payload") &&
                       PMIX_UINT32 == info[i].value.type) {
                payload = info[i].value.data.uint32;
            }
        }
        {
            std::lock_guard<std::mutex> g(seen.m);
            seen.calls++;
            seen.status = status;
            seen.ref = ref;
            seen.text = text;
            seen.payload = payload;
            if (nullptr != source) {
                seen.source_rank = source->rank;
                seen.same_nspace = PMIX_CHECK_NSPACE(source->nspace, me.nspace);
            }
        }
        if (nullptr != cbfunc) {
            cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
        }
        seen.cv.notify_all();
    };
    pmix_notification_fn_t drop = [](size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t *,
                                     size_t, pmix_info_t *, size_t,
                                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
        dropped_calls.fetch_add(1);
        if (nullptr != cbfunc) {
            cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
        }
    };

    // Non-blocking registration; the reference arrives through a promise.
    using Reg = std::promise<std::pair<pmix_status_t, size_t>>;
    Reg reg;
    auto reg_future = reg.get_future();
    pmix_hdlr_reg_cbfunc_t reg_done = [](pmix_status_t status, size_t ref, void *cbdata) {
        static_cast<Reg *>(cbdata)->set_value({status, ref});
    };
    pmix_status_t code = kCode;
    pmix_info_t *name;
    PMIX_INFO_CREATE(name, 1);
    PMIX_INFO_LOAD(&name[0], PMIX_EVENT_HDLR_NAME, "cxx-keep", PMIX_STRING);
    rc = PMIx_Register_event_handler(&code, 1, name, 1, keep, reg_done, &reg);
    PMIX_INFO_FREE(name, 1);
    size_t keep_ref = 0;
    pmix_status_t reg_status = 1;
    if (PMIX_SUCCESS == rc) {
        if (std::future_status::ready != reg_future.wait_for(kHang)) {
            fail("registration callback never ran");
        }
        std::tie(reg_status, keep_ref) = reg_future.get();
    }
    say("register_nb rc=" + std::to_string(rc) + " cb_status=" + std::to_string(reg_status) +
        " ref_ok=" + std::to_string(keep_ref >= 1));

    // Blocking registration, then a non-blocking deregistration.
    pmix_status_t dcode = kDropped;
    int drop_ref = PMIx_Register_event_handler(&dcode, 1, nullptr, 0, drop, nullptr, nullptr);
    say("register_blocking ref=" + std::to_string(drop_ref));
    if (drop_ref < 1) {
        fail("blocking registration");
    }
    {
        OpWait w;
        rc = PMIx_Deregister_event_handler(static_cast<size_t>(drop_ref), op_done, &w);
        if (PMIX_SUCCESS == rc && !w.wait()) {
            fail("deregistration callback never ran");
        }
        say("deregister_nb rc=" + std::to_string(rc) + " cb_status=" + std::to_string(w.status));
    }

    rc = PMIx_Fence(nullptr, 0, nullptr, 0);
    say("fence rc=" + std::to_string(rc));

    if (0 == me.rank) {
        // The dropped code first: from one source, events arrive in order, so
        // once ours has been handled the dropped one would have been too.
        rc = PMIx_Notify_event(kDropped, nullptr, PMIX_RANGE_NAMESPACE, nullptr, 0, nullptr,
                               nullptr);
        say("notify_dropped rc=" + std::to_string(rc));
        pmix_info_t *info;
        PMIX_INFO_CREATE(info, 2);
        PMIX_INFO_LOAD(&info[0], PMIX_EVENT_TEXT_MESSAGE, "hello from c++", PMIX_STRING);
        std::uint32_t payload = 7;
        PMIX_INFO_LOAD(&info[1], "cxx.payload", &payload, PMIX_UINT32);
        rc = PMIx_Notify_event(kCode, nullptr, PMIX_RANGE_NAMESPACE, info, 2, nullptr, nullptr);
        PMIX_INFO_FREE(info, 2);
        say("notify rc=" + std::to_string(rc));
    }

    {
        std::unique_lock<std::mutex> l(seen.m);
        if (!seen.cv.wait_for(l, kHang, [] { return seen.calls >= 1; })) {
            fail("the handler never ran");
        }
        std::ostringstream e;
        e << "event status=" << seen.status << " source_rank=" << seen.source_rank
          << " same_nspace=" << seen.same_nspace << " text=" << seen.text
          << " payload=" << seen.payload << " ref_matches=" << (seen.ref == keep_ref)
          << " calls=" << seen.calls;
        l.unlock();
        say(e.str());
    }
    say("dropped_calls=" + std::to_string(dropped_calls.load()));

    {
        OpWait w;
        rc = PMIx_Fence_nb(nullptr, 0, nullptr, 0, op_done, &w);
        if (PMIX_SUCCESS == rc && !w.wait()) {
            fail("Fence_nb callback never ran");
        }
        say("fence_nb rc=" + std::to_string(rc) + " cb_status=" + std::to_string(w.status));
    }

    rc = PMIx_Deregister_event_handler(keep_ref, nullptr, nullptr);
    if (PMIX_SUCCESS != rc) {
        fail("deregistering the kept handler: " + std::to_string(rc));
    }
    rc = PMIx_Finalize(nullptr, 0);
    say("finalize rc=" + std::to_string(rc));
    say("done");
    return 0;
}
