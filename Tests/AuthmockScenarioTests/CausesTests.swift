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

    /// A client that refreshes only by its own clock: the server's 401
    /// reaches the application and nothing follows it.
    @Test func aServerExpiredTokenNeverRefreshedIsNoRefreshAfter401() {
        var t = EvaluatorTests.signedIn()
        t.advanced = 301
        t.add(0.5, .resource, call: "c1", access: "A1", status: 401)
        t.call("c1", sent: 0.4, answered: 0.6, outcome: "http_error", status: 401)
        let causes = Causes.diagnose(t.observation, failed: Self.failed("refreshes", "outcomes"))
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

    /// A POST whose client failed before sending anything (its refresh broke
    /// inside the library): the body check fails for want of a request, and
    /// that is not a retry that lost the body (Net::OAuth2 on 7.1-clock).
    @Test func aBodyNeverSentIsNotARetryThatLostIt() {
        var t = EvaluatorTests.signedIn()
        t.call("c1", sent: 0.4, answered: 0.5, outcome: "transport_error", status: nil)
        t.calls[0].spec = CallSpec(method: "POST", path: "/api/notes", headers: [:], body: "{\"note\": 1}")
        let causes = Causes.diagnose(t.observation, failed: Self.failed("refreshes", "outcomes", "bodies_intact"))
        #expect(!causes.map(\.id).contains("retry-loses-request"), "\(causes)")
        // Sent and changed on the way, it is.
        t.add(0.45, .resource, path: "/api/notes", call: "c1", access: "A1", status: 200, body: "")
        #expect(Causes.diagnose(t.observation, failed: Self.failed("bodies_intact")).map(\.id) == ["retry-loses-request"])
    }

    /// A library whose renewal throws before sending anything (Net::OAuth2's
    /// password profile): no refresh request, every call an error.
    @Test func aRenewalThatBreaksInTheClientIsNamed() {
        var t = EvaluatorTests.signedIn(lifetime: 2)
        t.advanced = 3
        t.call("c1", sent: 3.1, answered: 3.2, outcome: "transport_error", status: nil)
        #expect(Causes.diagnose(t.observation, failed: Self.failed("refreshes", "outcomes")).map(\.id) == ["refresh-fails-in-client"])
        // A client that refreshed and then failed is not this cause.
        t.add(3.15, .refresh, path: "/oauth/token", refresh: "r1", status: 503)
        #expect(!Causes.diagnose(t.observation, failed: Self.failed("refreshes", "outcomes")).map(\.id).contains("refresh-fails-in-client"))
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
}
