@testable import AuthmockFileFormat
import AuthmockModel
@testable import AuthmockScenario
@testable import AuthmockServer
import Crypto
import DriverProtocol
import Foundation
import Testing

/// The evaluator on synthetic journals: no driver, no server. Times are
/// seconds after the case started; the server clock runs with real time
/// plus `advanced`.
struct EvaluatorTests {
    static let start = Date(timeIntervalSince1970: 1_000_000)

    /// A journal being written, with the token facts the core would report.
    struct Timeline {
        var entries: [JournalEntry] = []
        var tokens = TokenFacts()
        var calls: [CallRecord] = []
        /// Seconds the server clock is ahead (advance_clock).
        var advanced = 0.0

        mutating func add(
            _ at: Double, _ kind: RouteKind, path: String = "/api/items", call: String? = nil, access: String? = nil,
            refresh: String? = nil, status: Int, ms: Double = 2, issues: (access: String, lifetime: Double)? = nil,
            issuesRefresh: String? = nil, host: String = "127.0.0.1:8080", body: String? = nil, scheme: String = "Bearer",
            family: String = "f1"
        ) {
            let real = EvaluatorTests.start.addingTimeInterval(at)
            let virtual = real.addingTimeInterval(advanced)
            var entry = JournalEntry(
                seq: entries.count + 1, virtualTime: virtual, realTime: real, method: "GET", path: path, host: host, kind: kind,
                scheme: access == nil ? "none" : scheme, call: call, bodySHA256: body, bodyBytes: body?.count ?? 0,
                status: status, undelivered: false, durationMs: ms)
            if let access { entry.accessToken = PresentedToken(kind: .access, id: access, state: .valid) }
            if let refresh { entry.refreshToken = PresentedToken(kind: .refresh, id: refresh, state: .valid) }
            if let issues {
                entry.issuedAccess = issues.access
                tokens.accessFamily[issues.access] = family
                tokens.accessIssued[issues.access] = virtual
                tokens.accessLifetime[issues.access] = issues.lifetime
                tokens.accessExpiry[issues.access] = virtual.addingTimeInterval(issues.lifetime)
            }
            if let issuesRefresh {
                entry.issuedRefresh = issuesRefresh
                tokens.refreshFamily[issuesRefresh] = family
            }
            entries.append(entry)
        }

        mutating func call(_ id: String, path: String = "/api/items", sent: Double, answered: Double?, outcome: String = "ok", status: Int? = 200) {
            let answer = answered.map {
                DriverAnswer(
                    id: id, ok: outcome == "ok", outcome: OutcomeKind(rawValue: outcome), status: status, message: nil, profiles: nil,
                    capabilities: nil,
                    line: "", receivedAt: EvaluatorTests.start.addingTimeInterval($0))
            }
            calls.append(
                CallRecord(
                    call: id, driverID: id, spec: CallSpec(method: "GET", path: path, headers: [:], body: nil), answer: answer,
                    sentAt: EvaluatorTests.start.addingTimeInterval(sent)))
        }

        var observation: Observation { Observation(entries: entries, calls: calls, tokens: tokens, start: EvaluatorTests.start) }
        var judged: [RefreshJudgement.Kind] { RefreshNecessity.judge(observation).map(\.kind) }
    }

    static func signedIn(lifetime: Double = 300) -> Timeline {
        var t = Timeline()
        t.add(0, .login, path: "/oauth/token", status: 200, issues: ("A1", lifetime), issuesRefresh: "r1")
        return t
    }

    /// The timeline issue 11 reported: a correct client with a pool of 6,
    /// refreshing by its own clock, the gather holding its calls past the
    /// life of the refreshed 2 s token. Both refreshes are necessary.
    @Test func poolLimitedClientWhoseNewTokenExpiredDuringAHoldIsNotBlamed() {
        var t = Self.signedIn(lifetime: 2)
        t.add(2.101, .refresh, path: "/oauth/token", refresh: "r1", status: 200, issues: ("A2", 2), issuesRefresh: "r2")
        for n in 1...6 { t.add(2.106, .resource, call: "c\(n)", access: "A2", status: 200, ms: 2000) }
        t.add(4.110, .resource, call: "c7", access: "A2", status: 401)
        t.add(4.110, .resource, call: "c8", access: "A2", status: 401)
        t.add(4.115, .refresh, path: "/oauth/token", refresh: "r2", status: 200, issues: ("A3", 2), issuesRefresh: "r3")
        #expect(t.judged == [.necessary, .necessary])
        let verdict = SuperfluousRefreshesExpectation(range: .init(min: 0, max: 0)).judge(t.observation)
        #expect(verdict.passed, "\(verdict.message)")
    }

    /// Refresh per 401: the second refresh arrives while the first is held.
    @Test func aRefreshBesideOneInFlightIsSuperfluous() {
        var t = Self.signedIn()
        t.advanced = 301
        t.add(0.010, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.011, .resource, call: "c2", access: "A1", status: 401)
        t.add(0.012, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 300, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.013, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        let judged = RefreshNecessity.judge(t.observation)
        #expect(judged.map(\.kind) == [.necessary, .superfluous])
        #expect(judged[1].reason.contains("#4 of this login was still in flight"), "\(judged[1].reason)")
    }

    /// A late 401 for the replaced token, answered with a second refresh.
    @Test func aRefreshWhileHoldingALiveTokenIsSuperfluous() {
        var t = Self.signedIn()
        t.advanced = 301
        t.add(0.004, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.005, .refresh, path: "/oauth/token", refresh: "r1", status: 200, ms: 300, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.004, .resource, call: "c2", access: "A1", status: 401, ms: 1000)
        t.add(1.007, .refresh, path: "/oauth/token", refresh: "r2", status: 200, issues: ("A3", 300), issuesRefresh: "r3")
        let judged = RefreshNecessity.judge(t.observation)
        #expect(judged.map(\.kind) == [.necessary, .superfluous])
        #expect(judged[1].reason.contains("was live and never rejected"), "\(judged[1].reason)")
    }

    /// Proactive refreshes ahead of expiry, as real libraries' margins make them.
    @Test(arguments: [
        (300.0, 250.0, RefreshJudgement.Kind.early), (300.0, 160.0, .early), (300.0, 140.0, .superfluous), (3600.0, 3400.0, .early),
        (300.0, 0.5, .superfluous), (2.0, 0.5, .early),
    ])
    func earlyRefreshesAreAllowed(lifetime: Double, after: Double, expected: RefreshJudgement.Kind) {
        var t = Self.signedIn(lifetime: lifetime)
        t.add(after, .refresh, path: "/oauth/token", refresh: "r1", status: 200, issues: ("A2", lifetime), issuesRefresh: "r2")
        #expect(t.judged == [expected])
    }

    @Test func aRefreshAfterTheServerRefusedOneIsSuperfluous() {
        var t = Self.signedIn()
        t.advanced = 86_401
        t.add(0.010, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.012, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        t.add(0.030, .refresh, path: "/oauth/token", refresh: "r1", status: 400)
        let judged = RefreshNecessity.judge(t.observation)
        #expect(judged.map(\.kind) == [.necessary, .superfluous])
        #expect(judged[1].reason.contains("already refused"), "\(judged[1].reason)")
    }

    /// A revoked token: the refresh is necessary once a 401 told the client.
    @Test func aRejectedTokenMakesTheRefreshNecessary() {
        var t = Self.signedIn()
        t.add(1.0, .resource, call: "c1", access: "A1", status: 401)
        t.add(1.01, .refresh, path: "/oauth/token", refresh: "r1", status: 200, issues: ("A2", 300), issuesRefresh: "r2")
        #expect(t.judged == [.necessary])
    }

    /// A 401 for a token sent without `Bearer ` refuses the scheme, not the
    /// token: refreshing does not fix that, so the refresh is superfluous.
    @Test func a401ForABareTokenDoesNotRejectTheToken() {
        var t = Self.signedIn()
        t.add(1.0, .resource, call: "c1", access: "A1", status: 401, scheme: "(none: bare token)")
        t.add(1.01, .refresh, path: "/oauth/token", refresh: "r1", status: 200, issues: ("A2", 300), issuesRefresh: "r2")
        #expect(t.judged == [.superfluous])
    }

    /// `bodies_intact`: a retry with the app's bytes passes, an empty retry
    /// fails, and a call failed instead of replayed passes.
    @Test(arguments: [("replayed", true), ("empty", false), ("failed", true)])
    func bodiesIntact(retry: String, passes: Bool) throws {
        let body = "line one\n"
        let digest = SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
        var t = Self.signedIn()
        t.add(1.0, .resource, call: "c1", access: "A1", status: 401)
        t.add(1.01, .refresh, path: "/oauth/token", refresh: "r1", status: 200, issues: ("A2", 300), issuesRefresh: "r2")
        if retry != "failed" { t.add(1.02, .resource, call: "c1", access: "A2", status: 200) }
        t.call("c1", sent: 0.99, answered: 1.03, outcome: retry == "failed" ? "transport_error" : "ok", status: retry == "failed" ? nil : 200)
        t.calls[0].spec.body = body
        t.entries[1].bodySHA256 = digest
        t.entries[1].bodyBytes = body.utf8.count
        if retry == "replayed" {
            t.entries[3].bodySHA256 = digest
            t.entries[3].bodyBytes = body.utf8.count
        }
        #expect(BodiesIntactExpectation(required: true).judge(t.observation).passed == passes)
    }

    /// `requests_after_logout`: a request with a token after the sign-out is
    /// counted; a revocation is the sign-out itself.
    @Test func requestsAfterLogoutCountsTokensNotRevocations() {
        var t = Self.signedIn()
        t.add(1.0, .revoke, path: "/oauth/revoke", refresh: "r1", status: 200)
        t.add(1.2, .resource, call: "c2", access: "A1", status: 401)
        var observation = t.observation
        observation.signedOutAt = Self.start.addingTimeInterval(0.9)
        let judged = RequestsAfterLogoutExpectation(range: CountRange(min: 0, max: 0)).judge(observation)
        #expect(!judged.passed)
        #expect(judged.message.contains("saw 1"), "\(judged.message)")
        var none = Self.signedIn()
        none.add(1.0, .revoke, path: "/oauth/revoke", refresh: "r1", status: 200)
        var quiet = none.observation
        quiet.signedOutAt = Self.start.addingTimeInterval(0.9)
        #expect(RequestsAfterLogoutExpectation(range: CountRange(min: 0, max: 0)).judge(quiet).passed)
    }

    /// The driver reported the call that carried a rotated token before the
    /// next request: the client had it, however fast the next call came.
    @Test func aReportedCallProvesItsTokenWasDelivered() {
        var t = Self.signedIn()
        t.advanced = 301
        t.add(0.010, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.012, .refresh, call: "c1", refresh: "r1", status: 200, issues: ("A2", 300))
        t.call("c1", sent: 0.009, answered: 0.015)
        t.add(0.016, .resource, call: "c2", access: "A1", status: 401)
        t.add(0.018, .refresh, call: "c2", refresh: "r1", status: 200, issues: ("A3", 300))
        t.call("c2", sent: 0.015, answered: 0.020)
        #expect(t.judged == [.necessary, .superfluous])
        #expect(StaleTokenUsesExpectation.staleUses(t.observation).map(\.seq) == [4])
    }

    /// Every loser of a rotated refresh token counts, not only the first.
    @Test func everyPresentationOfASpentRefreshTokenCounts() {
        var t = Self.signedIn()
        t.add(1.0, .refresh, path: "/oauth/token", refresh: "r1", status: 200, issues: ("A2", 300), issuesRefresh: "r2")
        for at in [1.01, 1.02, 1.03] { t.add(at, .refresh, path: "/oauth/token", refresh: "r1", status: 400) }
        t.add(1.04, .refresh, path: "/oauth/token", refresh: "r2", status: 400)
        #expect(RefreshTokenReuseExpectation.reuses(in: t.entries).map(\.seq) == [3, 4, 5])
    }

    /// A driver that says "ok 200" for a call the server never saw, or a
    /// status the server never gave, fails `calls_on_the_wire`.
    @Test func answersWithoutEvidenceFail() throws {
        var t = Self.signedIn()
        t.call("c1", sent: 0.1, answered: 0.2)
        let nothingSent = try #require(CallEvidence.wire(t.observation))
        #expect(!nothingSent.passed)
        #expect(nothingSent.message.contains("no request of it reached the server"))

        t.add(0.15, .resource, call: "c1", access: "A1", status: 503)
        let hidden = try #require(CallEvidence.wire(t.observation))
        #expect(!hidden.passed)
        #expect(hidden.message.contains("never answered it 200"), "\(hidden.message)")

        t.add(0.17, .resource, call: "c1", access: "A1", status: 200)
        #expect(CallEvidence.wire(t.observation)?.passed == true)
    }

    /// `refresh_failed`: a proactive refresh that met a 503 before the call
    /// went out is honest when a refresh was answered 503, and only then.
    @Test func aRefreshThatFailedBeforeTheCallIsBackedByTheRefreshAnswer() throws {
        var t = Self.signedIn(lifetime: 2)
        t.add(3.0, .refresh, path: "/oauth/token", refresh: "r1", status: 503)
        t.call("c1", sent: 2.9, answered: 3.1, outcome: "refresh_failed", status: 503)
        #expect(CallEvidence.wire(t.observation)?.passed == true, "\(CallEvidence.wire(t.observation)?.message ?? "")")
        var other = Self.signedIn(lifetime: 2)
        other.add(3.0, .refresh, path: "/oauth/token", refresh: "r1", status: 429)
        other.call("c1", sent: 2.9, answered: 3.1, outcome: "refresh_failed", status: 503)
        let finding = try #require(CallEvidence.wire(other.observation))
        #expect(!finding.passed)
        #expect(finding.message.contains("no refresh was answered 503"), "\(finding.message)")
    }

    /// A retry without the app's headers is a finding, and is attributed
    /// to the one call in flight with that request line.
    @Test func aRetryThatDroppedTheCallHeaderIsFoundAndAttributed() throws {
        var t = Self.signedIn()
        t.advanced = 301
        t.add(0.010, .resource, call: "c1", access: "A1", status: 401)
        t.add(0.012, .refresh, path: "/oauth/token", refresh: "r1", status: 200, issues: ("A2", 300), issuesRefresh: "r2")
        t.add(0.016, .resource, access: "A2", status: 200)
        t.call("c1", sent: 0.009, answered: 0.020)
        let observation = t.observation
        #expect(observation.attempts(of: "c1").count == 2)
        let finding = try #require(CallEvidence.headers(observation))
        #expect(!finding.passed)
        #expect(finding.message.contains("attributed by timing and request line to c1"), "\(finding.message)")
        #expect(AttemptsPerCallExpectation(range: .init(min: 1, max: 1)).judge(observation).passed == false)
    }

    /// Expectations about something the client sends need it to have been sent.
    @Test func retryAfterNeedsAMetRetryAfter() throws {
        var t = Self.signedIn()
        t.call("c1", sent: 0.1, answered: 0.2)
        let value = SpecValue.object(["min_seconds": .number(1, nil)], nil)
        let expectation = try RetryAfterExpectation(value, checker: SpecChecker(file: "x"))
        #expect(!expectation.judge(t.observation).passed)
        t.add(0.11, .resource, call: "c1", access: "A1", status: 503)
        t.add(1.2, .resource, call: "c1", access: "A1", status: 200)
        #expect(expectation.judge(t.observation).passed)
    }

    /// Loop guards count the client's requests for the app, not discovery.
    @Test func maxRequestsIgnoresMetadata() throws {
        var t = Self.signedIn()
        for at in [0.1, 0.2, 0.3] { t.add(at, .metadata, path: "/.well-known/oauth-authorization-server", status: 200) }
        t.add(0.4, .resource, call: "c1", access: "A1", status: 200)
        let guardRail = try MaxRequestsExpectation(.integer(2, nil), checker: SpecChecker(file: "x"))
        #expect(guardRail.judge(t.observation).passed)
    }
}
