/// The "How verdicts are judged" section of docs/cases.md: the rules the
/// evaluator applies, in words, with worked journal examples. Kept beside
/// the code it describes; `EvaluatorTests` replays the same timelines.
enum VerdictRules {
    static let markdown = """
        ## How verdicts are judged

        A verdict says what the client did wrong, never what its transport did: the same \
        client must get the same verdict with one connection or a hundred, with or without \
        refreshing by its own clock. So the rules judge what the client *knew* (which \
        tokens the server had handed it, which answers had reached it) rather than counts \
        and timings. `authmock-reference-driver` is run through the whole suite with a pool \
        of 6 connections per host (URLSession's default) and unlimited, refreshing ahead of \
        expiry, at expiry and never by its own clock, and every case must give the same \
        verdict (`TransportIndependenceTests`).

        ### Refreshes are necessary, early or superfluous

        Each refresh request in the journal is classified from the tokens of its login \
        (family) that had been **delivered** to the client before it arrived. An answer \
        counts as delivered 50 ms after the server finished it, or earlier where the \
        journal proves it: the driver had already reported the call the answer belonged \
        to, or a request had already presented the token it carried.

        1. **superfluous** if another refresh of the same login was still in flight when it \
        arrived (a single-flight client never overlaps them);
        2. **superfluous** if the server had already refused a refresh of this login (a 4xx, \
        or GraphQL's `UNAUTHENTICATED` in a 200 body; 429 means "later", and a 5xx or a \
        lost answer says nothing about the token) \
        and handed out no token since: the session was over;
        3. **necessary** if the newest access token the client held had expired (server \
        clock), or an answer had already rejected that very token, sent as \
        `Bearer`, with a 401 or, from `/graphql` with `graphql_auth_errors: body`, a 200 \
        whose body says `UNAUTHENTICATED` (a revocation counts once such an answer has told the client; a \
        401 for a token sent without `Bearer ` refuses the scheme, not the token);
        4. **early** if that token was live and unrejected with at most max(60 s, half its \
        lifetime) left: a refresh ahead of expiry by the client's own clock \
        (golang.org/x/oauth2 refreshes 10 s early, authlib 60 s). Allowed;
        5. otherwise **superfluous**: the client held a live, never rejected token far from \
        expiry, typically a late 401 for an older token answered with a second refresh. \
        "Left" is measured against the lifetime the token was issued with (its \
        `expires_in`), not a later retirement by rotation.

        `superfluous_refreshes: 0` is how "refresh once" is checked; `refreshes` remains as \
        a loose loop guard. The built-in cases hold the refresh request for 300 ms (a \
        `delay` fault) wherever several calls meet one expired token, so a refresh made \
        beside another is surely in flight beside it, whatever the client's scheduling.

        Worked example, a correct client with a pool of 6 connections (case 1.5 before it \
        was fixed: the gather held the first six calls 2 s, longer than the 2 s token):

        ```text
        #2  +2.101s POST /oauth/token [refresh] refresh rt_1 valid -> 200 issued access A2 (2 s)
            necessary: the newest token it held (A1, 2 s) had expired 0.1 s before
        #3..#8 +2.106s GET /api/items access A2 valid -> 200   (held 2 s by the gather)
        #9, #10 +4.110s GET /api/items access A2 expired -> 401   (queued behind the pool)
        #11 +4.115s POST /oauth/token [refresh] refresh rt_2 valid -> 200 issued access A3
            necessary: A2 had expired 0.0 s before, and #9 had rejected it
        ```

        Both refreshes are necessary, so the client passes; counting refreshes failed it. \
        The cases now also keep every token issued during a case alive until it ends \
        (`sign_in_access_ttl` gives only the first token a short life), and a `gather` lets \
        its held requests go after 150 ms without a new arrival, so a pool-limited client \
        is never held long.

        Worked example, a client without the late-401 check (case 1.2):

        ```text
        #2 +0.004s GET /api/items call=c1 access A1 expired -> 401
        #4 +0.005s POST /oauth/token [refresh] refresh rt_1 valid -> 200 issued access A2   (held 300 ms)
        #3 +1.005s GET /api/items call=c2 access A1 expired -> 401   (answer held 1 s)
        #6 +1.007s POST /oauth/token [refresh] refresh rt_2 valid -> 200 issued access A3
            superfluous: A2 was live and never rejected, 299 s left of 300 s,
            delivered to it 0.66 s before this refresh
        ```

        And a client that refreshes per 401 (case 1.1): the second to tenth refresh arrive \
        while #12 is held: "refresh #12 of this login was still in flight".

        ### Sign-in decisions are judged on what the client was told

        A client may send the user to sign-in only after a refresh answer refused its \
        refresh token (a 4xx other than 429): `unfounded_reauth` counts the calls that \
        ended `reauth_required` with no such answer behind them. A refresh whose \
        connection was reset counts as told nothing, and a presentation of a spent refresh \
        token counts as reuse only when the server refused it: a reset, a 5xx or a 429 \
        spent nothing. Browsers resend a `POST` whose reused connection was reset before \
        the page sees an error, so a browser client can learn of a refusal where another \
        client sees a transport error (cases 2.3.2 and 3.3.1): both are judged right when \
        each acted on what it was told.

        ### must and should

        `expect:` holds what the case's rule forbids breaking (FAIL in a `must` case); \
        `should:` holds what is merely wasteful (NON-STRICT, never FAIL). Case 2.4 shows \
        the split: a client that stops by itself within 10 attempts passes the rule \
        (bounded), one refresh and one retry is the minimal behaviour (should). A client \
        with Alamofire's RefreshWindow (5 refreshes, then `excessiveRefresh`) is NON-STRICT; \
        one that never stops FAILs.

        ### No verdict without evidence

        Every case also checks, as `must`:

        - `calls_on_the_wire`: a call the application saw end `ok` or `http_error` was on \
          the wire, and the server answered one of its attempts, or a refresh, with the \
          status the driver reported (axios recipes reject a call with its refresh's \
          error). A driver that answers without sending, or hides what it got, fails.
        - `app_headers`: every request to the API carries the headers the application set, \
          `X-Authmock-Call` among them. A request without it is attributed to its call when \
          exactly one call with that method and path was in flight when it arrived, so \
          per-call checks and their evidence stay right.
        - `superfluous_sign_ins`: a sign-in the library made by itself (a password, code \
          or client-credentials grant outside the case's `login` steps) is a refresh by \
          another name, judged by the same rules: superfluous while another refresh or \
          sign-in was in flight, or while the client held a refresh token the server had \
          handed it and never refused (a 5xx, a 429 or a reset refuses nothing). A library \
          that drops its cached token before refreshing, so that concurrent callers each \
          sign in again with the password, fails here in every case where it happens.

        Expectations about calls first check that the thing they judge happened: \
        `retry_after` needs a call that met 429/503 (and one that claims success was sent \
        again), `same_body_on_retry` needs a retry, `every_attempt` a request to the API, \
        `foreign_requests_with_token` a request to the other host. `max_requests` counts \
        sign-in, refresh and API requests only (not metadata). `refresh_token_reuse` counts \
        every request that presented a refresh token another request had already exchanged \
        and got nothing for it, not only the first.

        Each finding names the rule it checks (`rule` in the JSON report): an RFC section, \
        the driver protocol, or the case's `reports:`.

        ### The teeth matrix has no race cells

        Every cell of `scenarios/_teeth.yaml` is a firm FAIL or PASS. CI runs every cell a \
        fault must fail, and a third of the cells it must pass: each fault meets every case \
        on one of its profiles, a different one for each fault in turn, so every pair of fault \
        and case is checked, and every case run is checked as a cell that must pass by several \
        faults. To run the whole matrix, and to check that it stays firm on a loaded machine, \
        run it three times while another process keeps a core busy:

        ```sh
        swift build --build-tests
        ( timeout 1800 sh -c 'while :; do :; done' & )   # one core busy
        for run in 1 2 3; do AUTHMOCK_TEETH_FULL=1 swift test --skip-build --filter TeethMatrixTests/theMatrixHolds || break; done
        ```

        ### A client the suite was not tuned to

        The reference driver's switches were written beside the cases they test. The cases \
        about signing out, account switches, cancelled callers, an app and its extension, \
        coming back online (9.x) and a short grace window (3.5) are also checked with a client written from \
        [driver-protocol.md](driver-protocol.md) and the Python helper alone \
        (`Tests/EndToEndTests/Fixtures/held-out-client.py`): it passes all of them (and every \
        case of the oauth2 profile it can express), and each of its `--bug` switches (a \
        cancel that abandons the refresh, an extension with its own copy of the store, a late \
        refresh answer written over a new session, a token cache a new sign-in does not \
        replace, a sign-out that never reaches the server, a refresh when the network \
        returns, a refresh without an answer tried again only with the next call) fails its own case, with the cause above that names it, and no other \
        (HeldOutClientTests).

        ### One cause, named once

        Many findings in many cases often come from one client behaviour: a client that \
        refreshes only by its own clock fails every case whose token the server expired, \
        for that one reason. Each failed case run names the behaviours its findings come \
        from (`causes` in the JSON report), and the console, the JSON report's top-level \
        `causes` and the compatibility page group case runs by them: the console shows each \
        shared cause once, with one case's evidence, and lists the other case runs under \
        it (`--verbose` shows every case's evidence). A cause is read from what the findings \
        measured (which bound broke, which way: `attempts_per_call` over is a client that does \
        not stop, under one that gave up) and from the journal, never from a finding's name \
        alone; a failed finding no cause explains is named by itself (`expectation:KEY`), and \
        a check that failed for want of anything to judge (no request reached the API once \
        the login was revoked) follows the cause found. The causes, in the order they are \
        tried (each that the case's journal shows takes the findings it explains), from \
        `Sources/AuthmockScenario/Causes.swift`:

        """
}
