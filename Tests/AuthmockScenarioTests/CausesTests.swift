@testable import AuthmockScenario
@testable import AuthmockServer
import Foundation
import Testing

/// The mapping from findings to causes, on synthetic journals: one client
/// behaviour is named once, whichever cases it breaks.
struct CausesTests {
    typealias Timeline = EvaluatorTests.Timeline

    static func failed(_ keys: String...) -> [Finding] {
        keys.map { Finding(expectation: $0, passed: false, message: "", evidence: []) }
    }

    /// A failed count: `name` saw `saw` where the case allowed exactly `expected`.
    static func count(_ name: FindingName, expected: Int, saw: Int, subject: String = "requests") -> Finding {
        let range = CountRange(min: expected, max: expected)
        return Finding(expectation: name.rawValue, passed: false, message: "", evidence: [], measured: [range.measure(subject, saw: saw)])
    }

    /// The failed findings of real expectations over a timeline.
    static func judged(_ t: EvaluatorTests.Timeline, _ items: [any AuthmockScenario.Expectation]) -> [Finding] {
        Expectations(items).evaluate(t.observation, level: .must).filter { !$0.passed }
    }

    /// A client that refreshes only by its own clock: the server's 401
    /// reaches the application and nothing follows it.
    @Test func aServerExpiredTokenNeverRefreshedIsNoRefreshAfter401() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.5, .resource, call: "c1", access: "A1", status: 401)
        t.call("c1", sent: 0.4, answered: 0.6, outcome: "http_error", status: 401)
        let causes = Causes.diagnose(t.observation, failed: [Self.count(.refreshes, expected: 1, saw: 0)] + Self.failed("outcomes"))
        #expect(causes.map(\.id) == ["no-refresh-after-401"])
        // A step that waited for the refresh is the same cause.
        #expect(Causes.diagnose(t.observation, failed: Self.failed("wait_for")).map(\.id) == ["no-refresh-after-401"])
    }

    /// Refresh per 401: the second refresh arrives while the first is held.
    @Test func overlappingRefreshesAreNoSingleFlight() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.010, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.011, .resource, call: "c2", access: "A1", status: 401)
        t.add(0.020, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 300, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.021, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        let causes = Causes.diagnose(t.observation, failed: Self.failed("superfluous_refreshes", "refresh_token_reuse", "outcomes"))
        // Single flight explains the reuse and the outcomes too: named once.
        #expect(causes.map(\.id) == ["no-single-flight"])
    }

    /// A client that waits for the refresh and ignores the token it brings:
    /// its retries leave a few milliseconds after the refresh's answer, before
    /// the driver has reported anything, which the stale-use count's 50 ms of
    /// slack does not yet call stale. A retry with the very token refused,
    /// sent after the newer token's answer ended, is (11.1.1 under CI load).
    @Test func aRetryWithTheRefusedTokenAfterTheRefreshEndedIsStale() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.010, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.011, .resource, call: "c2", access: "A1", status: 401)
        t.add(0.020, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 300, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.323, .resource, call: "c2", access: "A1", status: 401)
        t.call("c2", sent: 0.005, answered: 0.4, outcome: "http_error", status: 401)
        let failed = Self.failed("outcomes", "retried_with_new_token")
        #expect(Causes.diagnose(t.observation, failed: failed).map(\.id) == ["stale-token"])
        // A retry that left before the refresh's answer ended is not (yet) stale.
        t.entries[3].realTime = EvaluatorTests.start.addingTimeInterval(0.318)
        #expect(!Causes.diagnose(t.observation, failed: failed).map(\.id).contains("stale-token"))
    }

    /// A POST whose client failed before sending anything (its refresh broke
    /// inside the library): the body check fails for want of a request, and
    /// that is not a retry that lost the body (Net::OAuth2 on 7.1-clock).
    @Test func aBodyNeverSentIsNotARetryThatLostIt() {
        var t = EvaluatorTests.signedIn()
        t.call("c1", sent: 0.4, answered: 0.5, outcome: "transport_error", status: nil)
        t.calls[0].spec = CallSpec(method: "POST", path: "/api/notes", headers: [:], body: "{\"note\": 1}")
        let causes = Causes.diagnose(t.observation, failed: Self.judged(t, [BodiesIntactExpectation(required: true)]))
        #expect(!causes.map(\.id).contains("retry-loses-request"), "\(causes)")
        // Sent and changed on the way, it is.
        t.add(0.45, .resource, path: "/api/notes", call: "c1", access: "A1", status: 200, body: "")
        #expect(Causes.diagnose(t.observation, failed: Self.failed("bodies_intact")).map(\.id) == ["retry-loses-request"])
    }

    /// A library whose renewal throws before sending anything (Net::OAuth2's
    /// password dialect): no refresh request, every call an error.
    @Test func aRenewalThatBreaksInTheClientIsNamed() {
        var t = EvaluatorTests.signedIn(lifetime: 2)
        t.advanced = 3
        t.call("c1", sent: 3.1, answered: 3.2, outcome: "transport_error", status: nil)
        let failed = [Self.count(.refreshes, expected: 1, saw: 0)] + Self.failed("outcomes")
        #expect(Causes.diagnose(t.observation, failed: failed).map(\.id) == ["refresh-fails-in-client"])
        // A client that refreshed and then failed is not this cause.
        t.add(3.15, .refresh, path: "/oauth/token", refresh: "r1", status: 503)
        #expect(!Causes.diagnose(t.observation, failed: failed).map(\.id).contains("refresh-fails-in-client"))
    }

    @Test func aFailureNoCauseExplainsIsGroupedByItsExpectation() {
        let t = EvaluatorTests.signedIn()
        #expect(Causes.diagnose(t.observation, failed: Self.failed("expired_token_uses")).map(\.id) == ["expectation:expired_token_uses"])
        #expect(Causes.diagnose(t.observation, failed: []).isEmpty)
    }

    /// The report's groups: one line per cause, the case runs under it, most first.
    @Test func groupsNameEachCauseOnceWithItsCaseRuns() {
        func result(_ id: String, _ verdict: Verdict, _ causes: [String]) -> CaseResult {
            var result = CaseResult(
                id: id, name: id, profile: "oauth2", level: "must", file: "-", verdict: verdict, findings: [], calls: [], journal: [],
                driverStderr: "", seconds: 0)
            result.causes = causes.map { Cause(id: $0, title: $0) }
            return result
        }
        let results = [
            result("1.1", .fail, ["no-refresh-after-401"]), result("1.5", .fail, ["no-single-flight"]),
            result("3.1", .fail, ["no-refresh-after-401"]), result("5.1", .pass, []),
        ]
        let groups = Causes.groups(results)
        #expect(groups.map(\.cause.id) == ["no-refresh-after-401", "no-single-flight"])
        #expect(groups.first?.labels == ["1.1 [oauth2]", "3.1 [oauth2]"])
        let text = Reports.failures(results)
        #expect(text.components(separatedBy: "[no-refresh-after-401]").count == 2, "\(text)")
    }

    // The cause lines issue 55 found wrong: each is read from what was measured.

    /// A call that made one attempt where two were expected stopped too
    /// early: that is not a client that "does not stop by itself".
    @Test func tooFewAttemptsIsNotUnbounded() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.5, .resource, call: "c1", access: "A1", status: 401)
        t.call("c1", sent: 0.4, answered: 0.6, outcome: "http_error", status: 401)
        let failed = Self.judged(t, [AttemptsPerCallExpectation(range: .init(min: 2, max: 2))])
        #expect(failed.first?.missed(.under) == true)
        #expect(Causes.diagnose(t.observation, failed: failed).map(\.id) == ["no-refresh-after-401"])
        // Too many is.
        for _ in 0..<3 { t.add(0.55, .resource, call: "c1", access: "A1", status: 401) }
        let over = Self.judged(t, [AttemptsPerCallExpectation(range: .init(min: 2, max: 2))])
        #expect(Causes.diagnose(t.observation, failed: over).map(\.id).contains("unbounded"))
    }

    /// No refresh where one was expected, and the call ended as a failure
    /// with no 401 behind it: not unbounded, and shown as what it is.
    @Test func tooFewRefreshesIsNotUnbounded() {
        var t = EvaluatorTests.signedIn()
        t.add(0.5, .resource, call: "c1", access: "A1", status: 200)
        t.call("c1", sent: 0.4, answered: 0.6)
        let failed = Self.judged(t, [RefreshesExpectation(range: .init(min: 1, max: 1))])
        #expect(failed.first?.missed(.under) == true)
        #expect(Causes.diagnose(t.observation, failed: failed).map(\.id) == ["expectation:refreshes"])
    }

    /// 9.1: a call finished ok after the sign-out and tokens were still sent.
    /// Nobody was sent to sign in, so "signs out unrefused" is wrong.
    @Test func aCallAfterSignOutIsUsingTheSessionAfterSignOut() {
        var t = EvaluatorTests.signedIn()
        t.add(0.5, .resource, call: "c1", access: "A1", status: 200)
        t.call("c1", sent: 0.45, answered: 0.6)
        var observation = t.observation
        observation.signedOutAt = EvaluatorTests.start.addingTimeInterval(0.3)
        let afterLogout = Expectations([RequestsAfterLogoutExpectation(range: .init(min: 0, max: 0))])
            .evaluate(observation, level: .must).filter { !$0.passed }
        let outcomes = Finding(
            expectation: "outcomes", passed: false, message: "expected exactly 0 calls to end ok, 1 did", evidence: [],
            measured: [CountRange(min: 0, max: 0).measure("ok", saw: 1)])
        let causes = Causes.diagnose(observation, failed: [outcomes] + afterLogout).map(\.id)
        #expect(causes == ["uses-session-after-sign-out"], "\(causes)")
    }

    /// 9.3 with the new session's call joining the old session's refresh:
    /// both calls take the old login's late tokens, and which of them reaches
    /// the wire last depends on the machine's load. A use of the old login's
    /// older token after its newer one is not a second cause: it follows
    /// from keeping the signed-out session (CI named stale-token beside it).
    @Test func anOldSessionsStaleTokenIsTheSessionKeptAfterSignOut() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 3601
        t.add(0.10, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.11, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 3000, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.20, .login, path: "/oauth/token", status: 200, issues: ("B1", 300), issuesRefresh: "s1", family: "f2")
        t.add(0.30, .resource, call: "c2", access: "B1", status: 401)
        t.add(3.12, .resource, call: "c2", access: "A2", status: 401)
        t.add(3.13, .refresh, path: "/oauth/token", refresh: "r2", status: 200, ms: 5, issues: ("A3", 300), issuesRefresh: "r3")
        t.add(3.25, .resource, call: "c1", access: "A2", status: 401)
        t.add(3.26, .resource, call: "c2", access: "A3", status: 200)
        t.call("c1", sent: 0.05, answered: 3.3, outcome: "http_error", status: 401)
        t.call("c2", sent: 0.25, answered: 3.3)
        var observation = t.observation
        observation.signedOutAt = EvaluatorTests.start.addingTimeInterval(0.15)
        observation.signInSteps = [0.0...0.01, 0.19...0.22].map {
            EvaluatorTests.start.addingTimeInterval($0.lowerBound)...EvaluatorTests.start.addingTimeInterval($0.upperBound)
        }
        #expect(!StaleTokenUsesExpectation.staleUses(observation).isEmpty, "the old login's A2 is used after its A3 was delivered")
        let oldTokens = Expectations([OldLoginTokensExpectation(range: .init(min: 0, max: 0))]).evaluate(observation, level: .must)
            .filter { !$0.passed }
        #expect(oldTokens.count == 1 && oldTokens.allSatisfy { !($0.measured ?? []).contains(Measured.nothingToJudge) })
        let outcomes = Finding(
            expectation: "outcomes", passed: false, message: "", evidence: [],
            measured: [CountRange(min: 1, max: 1).measure("reauth_required", saw: 0)])
        let causes = Causes.diagnose(observation, failed: [outcomes] + oldTokens).map(\.id)
        #expect(causes == ["uses-session-after-sign-out"], "\(causes)")
    }

    /// aiohttp-oauth2-client on 9.5-clock: the cancelled call's task took
    /// its refresh (R3 spent at the server, the answer never read); the next
    /// call refreshed with R3 again, and the one after once more, after that
    /// refusal. Every second spend follows a spend that was out when the
    /// call was cancelled: the cancel is the cause, not a missing single flight.
    @Test func secondSpendsAfterACancelDuringTheRefreshAreTheCancels() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 3601
        t.add(0.10, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 1000, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.20, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        t.add(0.30, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        t.call("c1", sent: 0.05, answered: 0.15, outcome: "cancelled", status: nil)
        t.call("c2", sent: 0.16, answered: 0.25, outcome: "reauth_required", status: 400)
        t.calls[0].cancelledAt = EvaluatorTests.start.addingTimeInterval(0.15)
        let failed = [Self.count(.refreshTokenReuse, expected: 0, saw: 2), Self.count(.superfluousRefreshes, expected: 0, saw: 2)]
        #expect(Causes.diagnose(t.observation, failed: failed).map(\.id) == ["cancel-breaks-refresh"])
        // The same spends with the cancel after them: no single flight.
        t.calls[0].cancelledAt = EvaluatorTests.start.addingTimeInterval(0.35)
        #expect(Causes.diagnose(t.observation, failed: failed).map(\.id) == ["no-single-flight"])
    }

    /// Case 9.6: the app's call spends r1; then, with only the extension's call
    /// out, r1 is spent again. That is an instance's own stale copy of the
    /// store. The same second spend while both instances' calls are out is
    /// put down to neither: no single flight.
    @Test func aSecondSpendForAnotherInstanceIsItsOwnCopy() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 3601
        t.add(0.10, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 20, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.40, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        t.call("c1", sent: 0.05, answered: 0.2)
        t.call("c2", sent: 0.3, answered: 0.5, outcome: "reauth_required", status: 400)
        t.calls[1].spec.instance = 2
        let failed = [Self.count(.refreshTokenReuse, expected: 0, saw: 1), Self.count(.superfluousRefreshes, expected: 0, saw: 1)]
        #expect(Causes.diagnose(t.observation, failed: failed).map(\.id) == ["instances-keep-own-copies"])
        // The app's call still out at the second spend: not one instance's.
        t.calls[0].answer?.receivedAt = EvaluatorTests.start.addingTimeInterval(0.45)
        #expect(!Causes.diagnose(t.observation, failed: failed).map(\.id).contains("instances-keep-own-copies"))
        // One instance only: whatever it is, not the instances'.
        t.calls[0].answer?.receivedAt = EvaluatorTests.start.addingTimeInterval(0.2)
        t.calls[1].spec.instance = nil
        #expect(!Causes.diagnose(t.observation, failed: failed).map(\.id).contains("instances-keep-own-copies"))
    }

    /// A 401 that came after the server had refused the refresh token is no
    /// "never refreshes after a 401": the client was told its session is dead.
    @Test func a401AfterARefusedRefreshIsNotNoRefreshAfter401() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.10, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 50, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.11, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        t.add(0.30, .resource, call: "c1", access: "A1", status: 401)
        t.call("c1", sent: 0.05, answered: 0.4, outcome: "http_error", status: 401)
        let failed = [Self.count(.refreshes, expected: 1, saw: 2)] + Self.failed("outcomes")
        #expect(!Causes.diagnose(t.observation, failed: failed).map(\.id).contains("no-refresh-after-401"))
    }

    /// A Moya plugin's recipe: the 401 reaches the application and the
    /// refresh it started arrives while the app is already signing in again
    /// (case 9.4). The refresh is the client's own, not the sign-in step's:
    /// the client did refresh after the 401, it only never sent the call again.
    @Test func aRefreshBesideTheAppsOwn401IsNoRetryAfterRefresh() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.50, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.52, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        t.call("c1", sent: 0.45, answered: 0.51, outcome: "http_error", status: 401)
        var observation = t.observation
        observation.signInSteps = [EvaluatorTests.start.addingTimeInterval(0.515)...EvaluatorTests.start.addingTimeInterval(0.6)]
        #expect(observation.isSignInStep(observation.entries.first { $0.kind == .refresh }!) == false)
        let causes = Causes.diagnose(observation, failed: Self.failed("outcomes"))
        #expect(causes.map(\.id) == ["no-retry-after-refresh"])
        // Its evidence: the 401 the app was handed, and the refresh after it, which no finding shows.
        let evidence = causes.first?.evidence ?? []
        #expect(evidence.count == 2 && evidence[0].contains("[resource]") && evidence[1].contains("[refresh]"), "\(evidence)")
    }

    /// A refresh the server could not answer (a 503) leaves the call's 401
    /// the right answer for the app: not the cause, whatever else failed.
    @Test func a401HandedOnAfterARefreshThatGotA503IsNotNoRetryAfterRefresh() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.50, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.52, .refresh, path: "/oauth/token", refresh: "r1", status: 503)
        t.call("c1", sent: 0.45, answered: 0.6, outcome: "http_error", status: 401)
        #expect(!Causes.diagnose(t.observation, failed: Self.failed("outcomes")).map(\.id).contains("no-retry-after-refresh"))
    }

    /// A check that failed because no request reached the API (the login was
    /// revoked first) is no retry that lost the request.
    @Test func nothingToJudgeIsNotALostRequest() {
        var t = EvaluatorTests.signedIn()
        t.call("c1", sent: 0.4, answered: 0.5, outcome: "reauth_required", status: 400)
        let failed = Self.judged(t, [EveryAttemptExpectation(authorization: .bearer)])
        #expect(failed.count == 1)
        #expect(!Causes.diagnose(t.observation, failed: failed).map(\.id).contains("retry-loses-request"))
    }

    /// Every name the cause table uses is a finding name, and every
    /// expectation's key is one (a misspelt name cannot compile, and a new
    /// expectation cannot be missing from the typed names).
    @Test func everyExpectationKeyIsAFindingName() {
        for kind in ExpectationKinds.all { #expect(FindingName(rawValue: kind.key) != nil, "\(kind.key) is not in FindingName") }
        #expect(FindingName(finding: "check.refreshes") == .refreshes)
        #expect(FindingName(finding: SuperfluousSignIns.key) == .superfluousSignIns)
    }
}
