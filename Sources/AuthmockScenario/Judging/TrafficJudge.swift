public import AuthmockCore
public import AuthmockModel
public import AuthmockServer
import Foundation

/// `--judge` (`authmock serve --judge`, `authmock proxy --judge`): the
/// suite's expectations that need no scripted step, applied to whatever a
/// client did on its own, a person or a UI test driving the app. The same
/// judgements and the same cause table as `authmock run`, over the server's
/// journal and tokens; with no scripted call behind a request, only what the
/// wire shows is judged (docs/proxy.md, "Verdicts"):
///
/// - `superfluous_refreshes: 0`: a refresh beside another of its login in
///   flight, after the login's refresh was refused, or while the client
///   held a live, never rejected access token;
/// - `refresh_token_reuse: 0`: a refresh token another request had already
///   exchanged, presented again and refused;
/// - `stale_token_uses: 0`: an API call with an access token older than one
///   already delivered to the client;
/// - `superfluous_sign_ins`: a sign-in while a refresh was in flight or a
///   never refused refresh token was held;
/// - `requests_after_logout: 0`: a request presenting a token of a login
///   after that login's sign-out was answered.
///
/// A call is recognised without `X-Authmock-Call` (`RecognisedCalls`), and
/// once one was sent again: `same_body_on_retry` (the retry carried the
/// body the first request did) and, after a 401, `retried_with_new_token`.
public struct TrafficJudge: TrafficJudging {
    public init() {}

    /// The expectations, as a case would state them under `expect:`.
    static let expectations = Expectations([
        SuperfluousRefreshesExpectation(range: CountRange(min: 0, max: 0)),
        RefreshTokenReuseExpectation(range: CountRange(min: 0, max: 0)),
        StaleTokenUsesExpectation(range: CountRange(min: 0, max: 0)),
    ])

    /// Judged where the traffic holds what they judge, a call sent again
    /// (recognised without `X-Authmock-Call`: `RecognisedCalls`).
    static let retryExpectations = Expectations([
        SameBodyOnRetryExpectation(required: true),
        RetriedWithNewTokenExpectation(required: true),
    ])

    public func verdicts(entries: [JournalEntry], tokens: TokenSnapshot, endpointPaths: Set<String>) -> TrafficVerdicts {
        let (observation, findings) = Self.judge(entries: entries, tokens: tokens, endpointPaths: endpointPaths)
        guard let findings else { return TrafficVerdicts(verdict: "nothing-yet", requests: entries.count, logins: 0, findings: [], causes: []) }
        let failed = findings.filter { !$0.passed }
        let causes = Causes.diagnose(observation, failed: failed)
        return TrafficVerdicts(
            verdict: failed.isEmpty ? "pass" : "fail", requests: entries.count, logins: observation.labels.logins,
            findings: findings.map {
                TrafficVerdicts.Judged(
                    expectation: $0.expectation, passed: $0.passed, message: $0.message, evidence: $0.evidence, rule: $0.rule, entries: $0.entries)
            },
            causes: causes.map { TrafficVerdicts.NamedCause(id: $0.id, title: $0.title) })
    }

    /// The traffic as `authmock run --html` draws a case: the token
    /// endpoint's row and the other requests', what failed outlined.
    public func timeline(entries: [JournalEntry], tokens: TokenSnapshot, endpointPaths: Set<String>, dialect: String) -> String {
        SequenceDiagram.svg(Self.result(entries: entries, tokens: tokens, endpointPaths: endpointPaths, dialect: dialect))
    }

    /// The traffic as one case run of a report (`--judge` with `--junit`
    /// or `--html` at shutdown): its findings, causes, journal and picture.
    public static func result(entries: [JournalEntry], tokens: TokenSnapshot, endpointPaths: Set<String>, dialect: String) -> CaseResult {
        let (observation, findings) = judge(entries: entries, tokens: tokens, endpointPaths: endpointPaths)
        let failed = (findings ?? []).filter { !$0.passed }
        let causes = Causes.diagnose(observation, failed: failed)
        return CaseResult(
            id: "traffic", name: "the client's own traffic", profile: dialect, level: Scenario.Level.must.rawValue, file: "",
            verdict: findings == nil ? .skip : failed.isEmpty ? .pass : .fail,
            reason: findings == nil ? "no token was handed out yet: nothing to judge" : nil, findings: findings ?? [], calls: [],
            journal: entries.map(observation.line), entries: observation.reported, driverStderr: "",
            seconds: (entries.map { Observation.end($0) }.max() ?? observation.start).timeIntervalSince(observation.start),
            causes: causes.isEmpty ? nil : causes)
    }

    /// The observation of the traffic, and the findings over it (nil before any token was handed out).
    static func judge(entries: [JournalEntry], tokens: TokenSnapshot, endpointPaths: Set<String>) -> (Observation, [Finding]?) {
        var facts = TokenFacts(tokens)
        // A token whose end nobody said (no `exp`, no `expires_in`) has no
        // expiry to judge a refresh early or late against.
        facts.accessExpiry = facts.accessExpiry.filter { $0.value != .distantFuture }
        let start = entries.map(\.realTime).min() ?? Date()
        let observation = Observation(
            entries: entries, calls: [], tokens: facts, start: start, endpointPaths: endpointPaths, recognisingCalls: true)
        guard entries.contains(where: { $0.issuedAccess != nil || $0.issuedRefresh != nil }) else { return (observation, nil) }
        var findings = expectations.evaluate(observation, level: .must)
        findings += retryFindings(observation)
        if let signIns = SuperfluousSignIns.finding(observation, freeTraffic: true) { findings.append(signIns) }
        if let afterSignOut = afterSignOut(observation) { findings.append(afterSignOut) }
        return (observation, findings)
    }

    /// `same_body_on_retry` once a call with a body was sent again, and
    /// `retried_with_new_token` once a call was sent again after a 401: no
    /// finding before the traffic holds one.
    static func retryFindings(_ observation: Observation) -> [Finding] {
        let retried = observation.callIDs.map { observation.attempts(of: $0) }.filter { $0.count >= 2 }
        let afterRefusal = retried.contains { $0.dropLast().contains(where: \.refusedCredentials) }
        return retryExpectations.evaluate(observation, level: .must).filter { finding in
            guard !(finding.measured ?? []).contains(Measured.nothingToJudge) else { return false }
            return finding.expectation != RetriedWithNewTokenExpectation.key || afterRefusal
        }
    }

    /// `requests_after_logout` by login: requests presenting a token of a
    /// login after its sign-out was answered (a later sign-in is another
    /// login, whose requests are its own). nil when nobody signed out.
    static func afterSignOut(_ observation: Observation) -> Finding? {
        let signOuts = observation.entries.filter { $0.kind == .revoke && !$0.failed && !$0.undelivered }
        guard !signOuts.isEmpty else { return nil }
        let labels = observation.labels
        func login(_ entry: JournalEntry) -> Int? {
            labels.login(of: entry.refreshToken?.id) ?? labels.login(of: entry.accessToken?.id)
        }
        var after: [JournalEntry] = []
        for signOut in signOuts {
            guard let signedOut = login(signOut) else { continue }
            let end = Observation.end(signOut)
            after += observation.entries.filter {
                $0.seq > signOut.seq && $0.realTime > end && $0.kind != .revoke && login($0) == signedOut && !after.map(\.seq).contains($0.seq)
            }
        }
        after.sort { $0.seq < $1.seq }
        let key = RequestsAfterLogoutExpectation.key
        return Finding(
            expectation: key, passed: after.isEmpty,
            message: "expected 0 requests with a signed-out login's token after its sign-out was answered, saw \(after.count)"
                + (after.isEmpty ? "" : ": journal \(observation.seqs(after))"),
            evidence: observation.lines(after), rule: RequestsAfterLogoutExpectation.rule, level: Scenario.Level.must.rawValue,
            measured: [CountRange(min: 0, max: 0).measure("requests after the sign-out", saw: after.count)],
            entries: after.isEmpty ? nil : after.map(\.seq))
    }
}
