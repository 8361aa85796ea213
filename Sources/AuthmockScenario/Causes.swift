import AuthmockModel
import DriverProtocol
import Foundation

/// One client behaviour that explains findings in many cases: a report names
/// it once ("never refreshes after a 401: 22 case runs") instead of listing
/// the same failure 22 times, and each failed case says which cause it is.
///
/// The table is data beside the expectations: each cause says which failed
/// expectations it explains and, where a finding alone cannot tell, what in
/// the journal shows it. A case's causes are the ones whose evidence is in
/// its journal, in table order; a failure no cause explains is grouped by
/// its first failed expectation, so every failure still belongs to a group.
public struct Cause: Sendable, Equatable, Codable {
    /// Stable id, for the JSON report (`causes` in docs/report.schema.json).
    public var id: String
    /// What the client does, as a person says it.
    public var title: String
    /// The journal lines that show it, where the findings' own evidence
    /// need not (the refresh after a 401 the app was handed); nil: none given.
    public var evidence: [String]?

    public init(id: String, title: String) {
        self.id = id
        self.title = title
    }

    public init(id: String, title: String, evidence: [String]?) {
        self.init(id: id, title: title)
        self.evidence = evidence
    }
}

/// What a diagnosis reads: the case's journal and calls, and the findings
/// that failed with what they measured.
struct Symptoms {
    let observation: Observation
    /// The failed findings by name (a `check:` step's under its expectation's name).
    let failed: [FindingName: [Finding]]
    let refreshes: [RefreshJudgement]

    init(_ observation: Observation, failed: [Finding]) {
        self.observation = observation
        var byName: [FindingName: [Finding]] = [:]
        for finding in failed { if let name = finding.name { byName[name, default: []].append(finding) } }
        self.failed = byName
        refreshes = RefreshNecessity.judge(observation)
    }

    /// Whether a failed finding matches `pattern`.
    func shows(_ pattern: Causes.Pattern) -> Bool { (failed[pattern.name] ?? []).contains(where: pattern.matches) }
    func showsAny(_ patterns: [Causes.Pattern]) -> Bool { patterns.contains(where: shows) }

    /// A 401 (or GraphQL's UNAUTHENTICATED) for a Bearer token reached the
    /// client, no refusal of its refresh token had reached it before (a
    /// client told its refresh token is dead rightly stops refreshing), and
    /// no refresh or sign-in of its own followed.
    var refusalWithoutRefresh: Bool { unansweredRefusal != nil }

    /// The first refusal of a call's token with no renewal after it and no
    /// refused refresh before it (`refusalWithoutRefresh`).
    var unansweredRefusal: JournalEntry? {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        guard let refusal = own.first(where: { $0.kind == .resource && $0.presentsBearer && $0.refusedCredentials && !$0.undelivered }) else {
            return nil
        }
        let toldDead = own.contains { $0.seq < refusal.seq && $0.kind == .refresh && $0.refused }
        return !toldDead && !own.contains { $0.seq > refusal.seq && observation.isOwnRenewal($0) } ? refusal : nil
    }

    /// The first refresh made beside one of its login still in flight, and that one.
    var refreshBesideOneInFlight: [JournalEntry] {
        guard let beside = refreshes.first(where: { $0.kind == .superfluous && $0.reason.contains("still in flight") })?.entry else { return [] }
        let own = observation.entries.filter { !Observation.isForeign($0) && $0.kind == .refresh }
        let inFlight = own.last { $0.seq < beside.seq && Observation.end($0) > beside.realTime }
        return (inFlight.map { [$0] } ?? []) + [beside]
    }

    /// A call's only request was refused for its token, that refusal is
    /// what the application got (`http_error` with its status: a 401, or
    /// GraphQL's UNAUTHENTICATED in a 200), and the client refreshed (or
    /// signed in on its own) after it, and that renewed the token or was
    /// refused: the refresh led to no retry and no sign-in (a Moya plugin's
    /// `didReceive` starts one beside the answer). Under
    /// header rotation the refresh is the call's own second request.
    var refreshedButHandedOnRefusal: Bool { !refusalHandedOnAfterRenewal.isEmpty }

    /// The first call's refusal the application got, and the renewal after
    /// it (`refreshedButHandedOnRefusal`); empty when no call shows it.
    var refusalHandedOnAfterRenewal: [JournalEntry] {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        for call in observation.calls where call.outcome == OutcomeKind.httpError.rawValue {
            let attempts = observation.attempts(of: call.call).filter { $0.kind != .refresh }
            guard attempts.count == 1, let refusal = attempts.first, refusal.refusedCredentials, !refusal.undelivered,
                call.answer?.status == refusal.status
            else { continue }
            // A refresh that renewed the token or was refused; one the server
            // could not answer (a 5xx, a 429, a reset) leaves the 401 the right answer.
            if let renewal = own.first(where: { entry in
                entry.seq > refusal.seq && observation.isOwnRenewal(entry) && (entry.refused || !entry.failed && !entry.undelivered)
            }) {
                return [refusal, renewal]
            }
        }
        return []
    }

    /// No refresh request reached the server after the case's sign-in.
    var neverRefreshed: Bool { observation.refreshes.isEmpty }

    /// A call ended `reauth_required` and no refresh answer had refused the
    /// refresh token (a 4xx other than 429): the sign-in screen came from a
    /// 5xx, a 429 or a reset.
    var signedOutUnrefused: Bool {
        observation.calls.contains { $0.outcome == OutcomeKind.reauthRequired.rawValue }
            && !observation.refreshes.contains(where: \.refused)
    }

    /// A call ended in the client's own error, and no refresh request was
    /// ever sent: renewing broke inside the library.
    var failedWithoutRefreshing: Bool {
        neverRefreshed && observation.calls.contains { $0.outcome == OutcomeKind.transportError.rawValue }
    }

    /// Own API requests that carried an Authorization header of another
    /// scheme than Bearer (the token without its `Bearer ` prefix).
    var sentNonBearer: Bool {
        observation.resources.contains { $0.presentsAuthorization && !$0.presentsBearer }
    }

    /// Own API requests that carried no Authorization at all after the client had signed in.
    var sentWithoutToken: Bool {
        guard let signedIn = observation.entries.first(where: { $0.kind == .login && !$0.failed })?.seq else { return false }
        return observation.resources.contains { $0.seq > signedIn && !$0.presentsAuthorization }
    }

    /// Every refresh that presented a refresh token an earlier refresh had
    /// presented was sent after a cancel that came while such an earlier one
    /// was out: the cancel took the refresh, or the slot that let other calls
    /// wait for it, with it (KTOR-8285, ReviewStage/luke#570). A client that
    /// refreshes twice with one token without a cancel (case 9.5 shows its
    /// single flight first) has no single flight, whatever it did after.
    var refreshedAgainAfterCancel: Bool {
        guard !observation.cancels.isEmpty else { return false }
        let respent = respentRefreshTokens
        return !respent.isEmpty
            && respent.allSatisfy { later, earlier in
                earlier.contains { first in
                    observation.cancels.contains { first.realTime < $0.at && Observation.end(first) > $0.at && later.realTime > $0.at }
                }
            }
    }

    /// Each refresh that presented a refresh token earlier refreshes had
    /// presented, with those earlier ones, in journal order.
    var respentRefreshTokens: [(later: JournalEntry, earlier: [JournalEntry])] {
        let refreshes = observation.refreshes
        return refreshes.enumerated().compactMap { index, later in
            guard let token = later.refreshToken?.id else { return nil }
            let earlier = refreshes[..<index].filter { $0.refreshToken?.id == token }
            return earlier.isEmpty ? nil : (later, earlier)
        }
    }

    /// A refresh token spent by one instance of the app (case 9.6: the app,
    /// its extension) was spent again for another (`Observation.instance(ofRefresh:)`):
    /// the instances kept copies of their own instead of reading the store
    /// they share. A spend while both instances' calls were out is put down
    /// to neither: that is no single flight, not a stale copy.
    var spentAgainByAnotherInstance: Bool {
        respentRefreshTokens.contains { later, earlier in
            guard let second = observation.instance(ofRefresh: later) else { return false }
            return earlier.contains { observation.instance(ofRefresh: $0).map { $0 != second } ?? false }
        }
    }

    /// Requests that carried an access token older than one the client had already been handed.
    /// (Or retried the very token a 401 refused after the newer one's answer ended: `retriesPastNewer`.)
    /// A use of an earlier login's token after a later sign-in is left to the
    /// old-login causes: in a session the app has replaced, an older token
    /// of that session follows from keeping the session at all (9.3, where
    /// both calls of the dropped session race to use its tokens).
    var sentStaleToken: Bool {
        let oldLogin = Set(OldLoginTokensExpectation.uses(observation).map(\.seq))
        return (StaleTokenUsesExpectation.staleUses(observation) + StaleTokenUsesExpectation.retriesPastNewer(observation))
            .contains { !oldLogin.contains($0.seq) }
    }

    /// Requests that carried a token past its `expires_in` as the client counts it.
    var sentExpiredToken: Bool { !ExpiredTokenUsesExpectation.uses(observation).isEmpty }

    /// After the server refused the refresh token (and before any new
    /// sign-in), the client sent API calls with that login's dead token.
    var resentAfterRefusal: Bool {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        guard let refusal = own.first(where: { $0.kind == .refresh && $0.refused }) else { return false }
        let heard = Observation.end(refusal)
        for entry in own where entry.seq > refusal.seq {
            if entry.kind == .login { return false }
            if entry.kind == .resource && entry.presentsBearer && entry.realTime > heard { return true }
        }
        return false
    }

    /// A refresh answered 2xx without a refresh token, and later a call was
    /// sent to sign in with no refusal behind it: the client dropped the
    /// refresh token it still had (RFC 6749 section 6: the old one stays).
    var droppedRefreshToken: Bool {
        signedOutUnrefused
            && observation.refreshes.contains { !$0.failed && !$0.undelivered && $0.issuedAccess != nil && $0.issuedRefresh == nil }
    }

    /// A delivered answer carried an id token a fault rule forged.
    var forgedIDTokenDelivered: Bool {
        observation.entries.contains { entry in entry.fault.map(observation.idTokenFaults.contains) == true && !entry.undelivered }
    }

    /// The case allows no refresh at all, and the client made one: the
    /// answer it refreshed on does not call for one.
    /// Or the case expected a refused call to reach the application as an
    /// `http_error`, and the client refreshed more than allowed instead.
    var refreshedWhereNoneIsRight: Bool {
        (failed[.refreshes] ?? []).contains { finding in (finding.measured ?? []).contains { $0.way == .over && $0.max == 0 } }
            || shows(.over(.refreshes)) && shows(.under(.outcomes, OutcomeKind.httpError.rawValue))
    }

    /// Superfluous refreshes made while a live, never rejected token was
    /// held, split by what came just before: a 401 for an older token since
    /// the login's previous refresh (a late 401), or nothing at all.
    func superfluousLive(afterLate401: Bool) -> Bool {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        return refreshes.contains { judged in
            guard judged.kind == .superfluous, judged.reason.contains("live and never rejected") else { return false }
            let refresh = judged.entry
            // Since the client had the previous refresh's answer: a refusal it heard after that.
            let previous = own.last { $0.kind == .refresh && $0.seq < refresh.seq }.map(Observation.end) ?? .distantPast
            let late = own.contains { entry in
                entry.kind == .resource && entry.refusedCredentials && !entry.undelivered && entry.seq < refresh.seq
                    && Observation.end(entry) > previous && Observation.end(entry) <= refresh.realTime
            }
            return late == afterLate401
        }
    }

    /// A refresh token the server had rotated was presented again before
    /// the client had used anything the rotation handed it: the second
    /// refresh did not wait for the first (on a loaded machine it may reach
    /// the server only after the first was answered, so arrival times alone
    /// cannot tell). A client that keeps the first refresh token presents it
    /// again only after using the tokens of the rotation.
    var refreshedTwiceWithOneToken: Bool {
        let refreshes = observation.refreshes
        for (index, earlier) in refreshes.enumerated() {
            guard let token = earlier.refreshToken?.id, !earlier.failed, !earlier.undelivered, let issued = earlier.issuedRefresh,
                issued != token
            else { continue }
            let access = earlier.issuedAccess
            for later in refreshes[(index + 1)...] where later.refreshToken?.id == token {
                let adopted = observation.entries.contains { entry in
                    entry.seq < later.seq && (access != nil && entry.accessToken?.id == access || entry.refreshToken?.id == issued)
                }
                if !adopted { return true }
            }
        }
        return false
    }

    /// Refreshes the server answered but whose answer never reached the
    /// client, each with when the first call out at the loss was answered
    /// (what a retry "at once" must come before); a refresh no call was out
    /// for (a timer's) is left out.
    var lostRefreshes: [(lost: JournalEntry, answered: Date)] {
        observation.refreshes.compactMap { lost in
            guard lost.undelivered, !lost.failed,
                let answered = observation.calls.compactMap({ $0.sentAt <= lost.realTime ? $0.answer?.receivedAt : nil }).min()
            else { return nil }
            return (lost, answered)
        }
    }

    /// A refresh whose answer was lost, then, while the call it served was
    /// still out, a request to the same endpoint in which the server read no
    /// grant at all: the transport sent the refresh again at once without its
    /// body (FoundationNetworking resends a POST whose kept-alive connection
    /// closed, with an empty body, and the call then waits out its timeout).
    /// The two requests, or none.
    var refreshResentWithoutBody: [JournalEntry] {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        for (lost, answered) in lostRefreshes {
            if let resent = own.first(where: { entry in
                entry.seq > lost.seq && ![.refresh, .resource].contains(entry.kind) && entry.method == lost.method && entry.path == lost.path
                    && entry.realTime < answered
            }) {
                return [lost, resent]
            }
        }
        return []
    }

    /// A refresh whose answer was lost after the server had rotated its
    /// token, and a retry of it with that same token, sent only after a call
    /// out at the loss had been answered (with a later call, not at once),
    /// that the server refused: its grace window for the rotated token had
    /// closed (case 3.5). The two refreshes, or none.
    var lostRefreshRetriedLate: [JournalEntry] {
        let refreshes = observation.refreshes
        for (lost, answered) in lostRefreshes {
            guard let token = lost.refreshToken?.id, let issued = lost.issuedRefresh, issued != token else { continue }
            // The first presentation of the token after the loss: a retry at once that went through, and
            // the token kept and spent again later, is another behaviour (spent-refresh-token).
            if let retry = refreshes.first(where: { $0.seq > lost.seq && $0.refreshToken?.id == token }), retry.refused,
                retry.realTime > answered
            {
                return [lost, retry]
            }
        }
        return []
    }

    /// A sign-in the library made by itself that `superfluous_sign_ins`
    /// judges superfluous: made beside a refresh or sign-in in flight
    /// (`inFlight`), or while the client held a never refused refresh token.
    func superfluousSignIn(inFlight: Bool) -> Bool {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        return own.contains { entry in
            guard entry.kind == .login, !observation.isSignInStep(entry),
                let reason = SuperfluousSignIns.superfluousReason(entry, own: own, observation: observation)
            else { return false }
            return reason.hasSuffix("was still in flight") == inFlight
        }
    }

    /// A later sign-in's calls carried an earlier login's tokens, and the app
    /// had signed that login out with a `logout` step before the sign-in.
    var oldLoginTokensAfterSignOut: Bool {
        guard let signedOut = observation.signedOutAt else { return false }
        return observation.signInSteps.contains { $0.lowerBound > signedOut } && shows(.over(.oldLoginTokens))
    }

    /// An attempt of a call carried other bytes than the application's body.
    var alteredBody: Bool { !BodiesIntactExpectation.altered(observation).altered.isEmpty }

    /// A refresh (or sign-in of the library's own) followed a 403 (or the
    /// dialect's `insufficient_scope` in a 2xx) on the API with no refusal of
    /// the token between them: a new token does not cure a 403.
    var refreshAfter403: Bool {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        for (index, entry) in own.enumerated() where entry.kind == .resource && entry.forbidden && !entry.undelivered {
            for later in own[(index + 1)...] {
                if later.kind == .resource && later.refusedCredentials { break }
                if observation.isOwnRenewal(later) { return true }
            }
        }
        return false
    }

    func superfluous(_ reason: String) -> Bool {
        refreshes.contains { $0.kind == .superfluous && $0.reason.contains(reason) }
    }
}

enum Causes {
    /// Which failed findings a cause can explain: a name, and where it
    /// matters which way the measurement missed (`refreshes` over is not
    /// `refreshes` under) and for what (`reauth_required` among outcomes).
    struct Pattern: Sendable, Hashable {
        var name: FindingName
        var way: Measured.Way?
        var subject: String?

        /// Any failure of `name`, except one that failed for want of anything to judge.
        static func any(_ name: FindingName) -> Pattern { Pattern(name: name) }
        static func over(_ name: FindingName, _ subject: String? = nil) -> Pattern { Pattern(name: name, way: .over, subject: subject) }
        static func under(_ name: FindingName, _ subject: String? = nil) -> Pattern { Pattern(name: name, way: .under, subject: subject) }

        func matches(_ finding: Finding) -> Bool {
            guard finding.name == name, !finding.passed else { return false }
            if let way { return finding.missed(way, subject: subject) }
            return !(finding.measured ?? []).contains(Measured.nothingToJudge)
        }
    }

    /// A cause and how to recognise it.
    struct Entry: Sendable {
        var cause: Cause
        /// Failed findings it explains, once it shows.
        var explains: [Pattern]
        /// Whether the case's journal and findings show it.
        var shows: @Sendable (Symptoms) -> Bool
        /// The requests that show it, said under the cause line.
        var evidence: (@Sendable (Symptoms) -> [JournalEntry])? = nil
    }

    static let ok = OutcomeKind.ok.rawValue
    static let reauth = OutcomeKind.reauthRequired.rawValue

    /// Most telling first. Refreshes beside one in flight are judged before
    /// anything else (a client without single flight may also leave a call
    /// with its 401 once its login is revoked). A client that never refreshes
    /// after a 401 fails the count, outcome and reuse expectations of every
    /// server-expired case for that one reason, so nothing else is said of
    /// those cases.
    static let table: [Entry] = [
        // What breaks every request first: whatever else fails follows from it.
        Entry(
            cause: Cause(id: "no-bearer-scheme", title: "sends its token without the Bearer scheme (RFC 6750 section 2.1), so the server sees none"),
            explains: FindingName.allCases.map(Pattern.any),
            shows: { $0.sentNonBearer }),
        Entry(
            cause: Cause(id: "sends-without-token", title: "sends API calls without its token (while a refresh is in flight, or after dropping it)"),
            explains: FindingName.allCases.map(Pattern.any),
            shows: { $0.sentWithoutToken }),
        Entry(
            cause: Cause(
                id: "accepts-bad-id-token", title: "accepts an id token it should refuse (another user or issuer, another nonce, a forged one)"),
            explains: [.any(.login), .any(.outcomes)],
            shows: { $0.shows(.any(.login)) || $0.forgedIDTokenDelivered && $0.shows(.any(.outcomes)) }),
        // Before single flight: the second refresh is beside the first, and the cancel is why.
        Entry(
            cause: Cause(
                id: "cancel-breaks-refresh",
                title:
                    "refreshes again with the same refresh token after a call was cancelled during the refresh: the cancel took the refresh (or the slot other calls wait on) with it"
            ),
            explains: [
                .any(.superfluousRefreshes), .over(.refreshes), .any(.refreshTokenReuse), .any(.outcomes), .any(.unfoundedReauth),
                .over(.attemptsPerCall), .over(.maxRequests),
            ],
            shows: { $0.refreshedAgainAfterCancel }),
        // Before single flight: the second spend is an instance's stale copy, made with no other call out.
        Entry(
            cause: Cause(
                id: "instances-keep-own-copies",
                title:
                    "one instance of the app (its extension, a widget) refreshes with a refresh token another instance already spent: each keeps its own copy of the token store they share"
            ),
            explains: [
                .any(.superfluousRefreshes), .over(.refreshes), .any(.refreshTokenReuse), .any(.outcomes), .any(.unfoundedReauth),
                .any(.staleTokenUses), .over(.attemptsPerCall), .over(.maxRequests),
            ],
            shows: { $0.spentAgainByAnotherInstance }),
        Entry(
            cause: Cause(id: "no-single-flight", title: "refreshes (or signs in) beside a refresh already in flight: no single flight"),
            explains: [
                .any(.superfluousRefreshes), .any(.superfluousSignIns), .over(.refreshes), .any(.refreshTokenReuse), .any(.outcomes),
                .any(.unfoundedReauth), .over(.logins), .any(.staleTokenUses), .over(.maxRequests), .any(.attemptsPerCall),
            ],
            shows: { $0.superfluous("still in flight") || $0.refreshedTwiceWithOneToken || $0.superfluousSignIn(inFlight: true) },
            evidence: { $0.refreshBesideOneInFlight }),
        // A sign-in of its own with nothing in flight: not single flight, the tokens it dropped.
        Entry(
            cause: Cause(
                id: "signs-in-again-unasked",
                title:
                    "signs in again by itself (a grant the app did not ask for) while it held a refresh token the server never refused, with no refresh or sign-in in flight"
            ),
            explains: [.any(.superfluousSignIns), .over(.logins), .over(.maxRequests)],
            shows: { $0.superfluousSignIn(inFlight: false) }),
        // Before the 401 handed on: the call whose refresh was lost may end with it, rightly.
        Entry(
            cause: Cause(
                id: "refresh-resent-without-body",
                title:
                    "sends a refresh whose answer was lost again at once, but without its body (its transport's own resend): the token endpoint reads no grant, and the refresh token reaches it again only later (after a timeout, or with a later call)"
            ),
            explains: [.any(.outcomes), .any(.unfoundedReauth), .under(.refreshes)],
            shows: { !$0.refreshResentWithoutBody.isEmpty },
            evidence: { $0.refreshResentWithoutBody }),
        Entry(
            cause: Cause(
                id: "lost-refresh-retried-late",
                title:
                    "tries a refresh whose answer was lost again only with a later call, when the server no longer took the rotated token (sent again at once, it was inside the server's grace window)"
            ),
            explains: [.any(.outcomes), .any(.unfoundedReauth)],
            shows: { !$0.lostRefreshRetriedLate.isEmpty },
            evidence: { $0.lostRefreshRetriedLate }),
        Entry(
            cause: Cause(
                id: "no-retry-after-refresh",
                title:
                    "refreshes on a 401 but hands that 401 to the application: the call is neither sent again with the new token nor ends in sign-in"
            ),
            // A refresh started beside the answer may land after the case's
            // last answer: too few refreshes in the case is the same behaviour.
            explains: [
                .any(.outcomes), .under(.attemptsPerCall), .any(.retriedWithNewToken), .any(.sameBodyOnRetry), .any(.mutationsPerCall),
                .any(.waitFor), .under(.refreshes),
            ],
            shows: {
                $0.refreshedButHandedOnRefusal
                    && $0.showsAny([.any(.outcomes), .under(.attemptsPerCall), .any(.retriedWithNewToken), .any(.waitFor)])
            },
            evidence: { $0.refusalHandedOnAfterRenewal }),
        Entry(
            cause: Cause(id: "no-refresh-after-401", title: "never refreshes after a 401 (refreshes only by its own clock, or not at all)"),
            explains: [
                .under(.refreshes), .any(.outcomes), .any(.superfluousRefreshes), .any(.retriedWithNewToken), .any(.sameBodyOnRetry),
                .any(.bodiesIntact), .any(.retryAfter), .any(.mutationsPerCall), .any(.unfoundedReauth), .any(.refreshTokenReuse),
                .under(.attemptsPerCall), .under(.logins), .any(.waitFor),
            ],
            shows: {
                $0.refusalWithoutRefresh
                    && $0.showsAny([
                        .under(.refreshes), .under(.attemptsPerCall), .any(.outcomes), .any(.retriedWithNewToken), .any(.mutationsPerCall),
                        .any(.waitFor),
                    ])
            },
            evidence: { $0.unansweredRefusal.map { [$0] } ?? [] }),
        Entry(
            cause: Cause(
                id: "refresh-fails-in-client",
                title: "fails inside the client when the token needs renewing: no refresh request is sent, calls end in an error"
            ),
            explains: [.under(.refreshes), .any(.outcomes), .any(.waitFor), .any(.retriedWithNewToken), .under(.attemptsPerCall)],
            shows: { $0.failedWithoutRefreshing && $0.showsAny([.under(.refreshes), .any(.waitFor)]) }),
        Entry(
            cause: Cause(id: "refresh-after-refusal", title: "refreshes again after the server refused the refresh token"),
            explains: [.any(.superfluousRefreshes), .over(.refreshes), .over(.maxRequests), .over(.attemptsPerCall)],
            shows: { $0.superfluous("already refused") }),
        Entry(
            cause: Cause(id: "refresh-on-403", title: "refreshes on a 403, which a new token does not cure (RFC 6750: insufficient_scope)"),
            explains: [
                .any(.superfluousRefreshes), .over(.refreshes), .over(.attemptsPerCall), .over(.maxRequests), .any(.outcomes), .any(.answeredWith),
            ],
            shows: { $0.refreshAfter403 }),
        Entry(
            cause: Cause(id: "stale-token", title: "sends an access token older than one the server already handed it (a rotated one it ignored)"),
            explains: [
                .any(.staleTokenUses), .any(.superfluousRefreshes), .over(.refreshes), .any(.outcomes), .any(.retriedWithNewToken),
                .over(.attemptsPerCall), .over(.maxRequests), .any(.expiredTokenUses), .any(.refreshTokenReuse),
            ],
            shows: { $0.sentStaleToken }),
        Entry(
            cause: Cause(
                id: "refresh-on-wrong-signal",
                title:
                    "refreshes on an answer that does not say the token expired (another scheme's challenge, another host's 401, an error code or GraphQL error that is not about the token)"
            ),
            explains: [
                .over(.refreshes), .any(.superfluousRefreshes), .over(.attemptsPerCall), .over(.maxRequests), .any(.outcomes),
                .any(.answeredWith),
            ],
            shows: { $0.refreshedWhereNoneIsRight }),
        Entry(
            cause: Cause(id: "resends-after-refusal", title: "sends calls again with the dead token after the server refused its refresh token"),
            explains: [.over(.attemptsPerCall), .over(.maxRequests), .any(.requestsAfterLogout), .any(.outcomes), .any(.superfluousRefreshes)],
            shows: { $0.resentAfterRefusal && $0.showsAny([.over(.attemptsPerCall), .over(.maxRequests), .any(.requestsAfterLogout)]) }),
        Entry(
            cause: Cause(id: "second-refresh-for-late-401", title: "refreshes again for a 401 that answered an older token"),
            explains: [.any(.superfluousRefreshes), .over(.refreshes)],
            shows: { $0.superfluousLive(afterLate401: true) }),
        Entry(
            cause: Cause(
                id: "refreshes-live-token",
                title: "refreshes while it holds a live, never refused token (its idea of when the token expires is off)"),
            explains: [.any(.superfluousRefreshes), .over(.refreshes), .over(.attemptsPerCall), .over(.maxRequests)],
            shows: { $0.superfluousLive(afterLate401: false) }),
        Entry(
            cause: Cause(id: "no-proactive-refresh", title: "sends a token past its expires_in and waits for the 401, instead of renewing first"),
            explains: [.any(.expiredTokenUses), .over(.attemptsPerCall), .any(.outcomes)],
            shows: { $0.sentExpiredToken && $0.showsAny([.any(.expiredTokenUses), .over(.attemptsPerCall)]) }),
        Entry(
            cause: Cause(id: "spent-refresh-token", title: "presents a refresh token that was already rotated or spent"),
            explains: [.any(.refreshTokenReuse), .any(.outcomes), .any(.unfoundedReauth)],
            shows: { $0.shows(.any(.refreshTokenReuse)) }),
        Entry(
            cause: Cause(
                id: "drops-refresh-token", title: "forgets its refresh token when a refresh answer carries none, and then signs the user out"),
            explains: [.any(.unfoundedReauth), .over(.outcomes, reauth), .under(.outcomes, ok), .under(.refreshes)],
            shows: { $0.droppedRefreshToken }),
        Entry(
            cause: Cause(
                id: "signs-out-unrefused",
                title: "sends the user to sign in although the server refused nothing (after a 5xx, a 429, a reset, or an answer it misread)"),
            explains: [.any(.unfoundedReauth), .over(.outcomes, reauth), .under(.outcomes, ok), .under(.refreshes)],
            shows: { $0.shows(.any(.unfoundedReauth)) || $0.shows(.over(.outcomes, reauth)) && $0.signedOutUnrefused }),
        Entry(
            cause: Cause(id: "uses-session-after-sign-out", title: "keeps using the signed-out session's tokens after the app signed the user out"),
            explains: [.any(.requestsAfterLogout), .any(.oldLoginTokens), .over(.outcomes, ok), .under(.outcomes, ok), .under(.outcomes, reauth)],
            shows: { $0.shows(.over(.requestsAfterLogout)) || $0.oldLoginTokensAfterSignOut }),
        Entry(
            cause: Cause(
                id: "keeps-old-login-tokens",
                title: "keeps an earlier login's tokens after a new sign-in (a token cache the sign-in does not replace)"),
            explains: [.any(.oldLoginTokens), .any(.outcomes), .any(.superfluousRefreshes), .over(.refreshes), .any(.unfoundedReauth)],
            shows: { $0.shows(.over(.oldLoginTokens)) && !$0.oldLoginTokensAfterSignOut }),
        Entry(
            cause: Cause(
                id: "signs-out-locally-only", title: "forgets its tokens on sign-out but never ends the login at the backend's sign-out endpoint"),
            explains: [.any(.signedOutAtServer)],
            shows: { $0.shows(.any(.signedOutAtServer)) }),
        Entry(
            cause: unbounded,
            explains: [.over(.attemptsPerCall), .over(.maxRequests), .over(.refreshes)],
            shows: { $0.showsAny([.over(.attemptsPerCall), .over(.maxRequests)]) }),
        Entry(
            cause: Cause(id: "token-to-third-party", title: "sends the bearer token to another host"),
            explains: [.over(.foreignRequestsWithToken), .any(.refreshes), .any(.outcomes)],
            shows: { $0.shows(.over(.foreignRequestsWithToken)) }),
        Entry(
            cause: retryLosesRequest,
            // A call whose only request lost its header has no request of its own on the wire.
            explains: [.any(.appHeaders), .any(.bodiesIntact), .any(.sameBodyOnRetry), .any(.everyAttempt), .any(.callsOnTheWire)],
            // `any` leaves out a check that failed for want of a request: a body never sent is not a body a retry lost.
            shows: { $0.showsAny([.any(.appHeaders), .any(.bodiesIntact), .any(.sameBodyOnRetry), .any(.everyAttempt)]) }),
        // The same behaviour where no body check is stated: the server read
        // the altered body (a GraphQL query gone), and the call failed for it.
        Entry(
            cause: retryLosesRequest,
            explains: [.any(.outcomes), .any(.mutationsPerCall), .any(.bodiesIntact), .any(.sameBodyOnRetry)],
            shows: { $0.alteredBody }),
        Entry(
            cause: Cause(id: "ignores-retry-after", title: "retries before Retry-After"),
            explains: [.any(.retryAfter)],
            shows: { $0.shows(.any(.retryAfter)) }),
        Entry(
            cause: Cause(id: "no-retry-of-503", title: "hands a 503 or 429 to the application without retrying it (its transport's policy)"),
            explains: [.any(.outcomes)],
            shows: { symptoms in
                symptoms.shows(.any(.outcomes))
                    && symptoms.observation.calls.contains {
                        $0.outcome == OutcomeKind.httpError.rawValue && [429, 503].contains($0.answer?.status ?? 0)
                    }
            }),
        Entry(
            cause: Cause(
                id: "missed-the-refusal",
                title: "its calls never met the refusal the case is about: the server refused them for another reason first (their credentials)"),
            explains: [.any(.answeredWith)],
            shows: { $0.shows(.any(.answeredWith)) }),
        Entry(
            cause: Cause(id: "unproven-answers", title: "reports answers the wire does not show"),
            explains: [.any(.callsOnTheWire)],
            shows: { $0.shows(.any(.callsOnTheWire)) }),
    ]

    /// Every cause the table can name, once, in table order.
    public static var all: [Cause] { table.map(\.cause).reduce(into: []) { if !$0.contains($1) { $0.append($1) } } }

    static let retryLosesRequest = Cause(id: "retry-loses-request", title: "a retry loses what the application sent (its headers or body)")
    static let unbounded = Cause(id: "unbounded", title: "does not stop by itself: retries or refreshes past any bound")

    /// The cause of a failed finding no entry explains: the finding itself.
    static func itself(_ name: String) -> Cause { Cause(id: "expectation:\(name)", title: "breaks `\(name)`") }

    /// The causes of one case's failed findings; empty when nothing failed.
    /// A failed finding no cause explains is named by itself, never put
    /// under another cause's title.
    static func diagnose(_ observation: Observation, failed: [Finding]) -> [Cause] {
        guard !failed.isEmpty else { return [] }
        let symptoms = Symptoms(observation, failed: failed)
        var causes: [Cause] = []
        var unexplained = failed
        for entry in table where entry.shows(symptoms) {
            let explained = unexplained.filter { finding in entry.explains.contains { $0.matches(finding) } }
            guard !explained.isEmpty else { continue }
            if !causes.contains(where: { $0.id == entry.cause.id }) {
                var cause = entry.cause
                let shown = entry.evidence.map { $0(symptoms) } ?? []
                if !shown.isEmpty { cause.evidence = observation.lines(shown, limit: 4) }
                causes.append(cause)
            }
            unexplained.removeAll { finding in entry.explains.contains { $0.matches(finding) } }
        }
        // A check that failed for want of anything to judge (no request reached
        // the API once the login was revoked) is a consequence of the cause found.
        if !causes.isEmpty { unexplained.removeAll { ($0.measured ?? []).contains(Measured.nothingToJudge) } }
        var named = Set<String>()
        for finding in unexplained {
            let name = finding.name?.rawValue ?? finding.expectation
            if named.insert(name).inserted { causes.append(itself(name)) }
        }
        return causes
    }

    /// Case runs by cause, most first: the report's "one cause, once".
    static func groups(_ results: [CaseResult]) -> [(cause: Cause, labels: [String])] {
        var order: [Cause] = []
        var labels: [String: [String]] = [:]
        for result in results where result.verdict == .fail || result.knownFailure != nil {
            for cause in result.causes ?? [] {
                // One case run's evidence is no group's.
                if labels[cause.id] == nil { order.append(Cause(id: cause.id, title: cause.title)) }
                labels[cause.id, default: []].append(result.label)
            }
        }
        return order.map { ($0, labels[$0.id] ?? []) }.sorted { $0.labels.count > $1.labels.count }
    }
}
