@testable import AuthmockScenario
@testable import AuthmockServer
import Foundation
import Testing

/// `superfluous_sign_ins` on synthetic journals: a sign-in the library made
/// by itself is judged like a refresh.
struct SignInNecessityTests {
    typealias Timeline = EvaluatorTests.Timeline

    /// The sign-in of the case's own `login` step, answered at 0.01 s.
    static func signedIn() -> Timeline {
        var t = EvaluatorTests.signedIn()
        t.add(0.5, .resource, call: "c1", access: "A1", status: 200)
        return t
    }

    static func observation(_ t: Timeline) -> Observation {
        var observation = t.observation
        observation.signInSteps = [EvaluatorTests.start...EvaluatorTests.start.addingTimeInterval(0.01)]
        return observation
    }

    /// The library the issue reported: it drops its cached token before
    /// refreshing, so seven concurrent callers sign in with the password
    /// beside the one refresh.
    @Test func passwordGrantsBesideARefreshAreSuperfluous() throws {
        var t = Self.signedIn()
        t.advanced = 301
        t.add(1.0, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 300, issues: ("A2", 300), issuesRefresh: "r2")
        for _ in 1...7 { t.add(1.01, .login, path: "/oauth/token", status: 200, issues: ("A3", 300), issuesRefresh: "r3") }
        let finding = try #require(SuperfluousSignIns.finding(Self.observation(t)))
        #expect(!finding.passed)
        #expect(finding.message.contains("saw 7"), "\(finding.message)")
        #expect(finding.message.contains("refresh #3 was still in flight"), "\(finding.message)")
    }

    /// A sign-in with a refresh token in hand that nobody refused: a refresh would have done.
    @Test func aSignInWhileHoldingAnUnrefusedRefreshTokenIsSuperfluous() throws {
        var t = Self.signedIn()
        t.advanced = 301
        t.add(1.0, .resource, call: "c2", access: "A1", status: 401)
        t.add(1.1, .login, path: "/oauth/token", status: 200, issues: ("A2", 300), issuesRefresh: "r2")
        let finding = try #require(SuperfluousSignIns.finding(Self.observation(t)))
        #expect(!finding.passed)
        #expect(finding.message.contains("held refresh token R1"), "\(finding.message)")
    }

    /// A sign-in 0.1 s after a refresh answered `status`.
    static func signInAfterRefresh(answered status: Int) throws -> Finding {
        var t = Self.signedIn()
        t.advanced = 301
        t.add(1.0, .refresh, path: "/oauth/token", refresh: "r1", status: status)
        t.add(1.1, .login, path: "/oauth/token", status: 200, issues: ("A2", 300), issuesRefresh: "r2")
        return try #require(SuperfluousSignIns.finding(Self.observation(t)))
    }

    /// After the server refused the refresh token, signing in again is what
    /// is left; a 503 or a 429 refuses nothing: the refresh token still holds.
    @Test func aSignInAfterARefusedRefreshIsNecessaryAfterA503OrA429Superfluous() throws {
        #expect(try Self.signInAfterRefresh(answered: 400).passed)
        #expect(try Self.signInAfterRefresh(answered: 401).passed)
        #expect(try !Self.signInAfterRefresh(answered: 503).passed)
        #expect(try !Self.signInAfterRefresh(answered: 429).passed)
    }

    /// Sign-ins the case's login steps asked for are the application's, and
    /// a client-credentials client that never held a refresh token may sign
    /// in whenever it needs a token.
    @Test func signInsTheAppAskedForOrWithoutARefreshTokenAreNotJudged() throws {
        #expect(SuperfluousSignIns.finding(Self.observation(Self.signedIn())) == nil)
        var t = EvaluatorTests.Timeline()
        t.add(0, .login, path: "/oauth/token", status: 200, issues: ("A1", 300))
        t.advanced = 301
        t.add(1.0, .resource, call: "c1", access: "A1", status: 401)
        t.add(1.1, .login, path: "/oauth/token", status: 200, issues: ("A2", 300))
        let finding = try #require(SuperfluousSignIns.finding(t.observation))
        #expect(finding.passed, "\(finding.message)")
    }
}
