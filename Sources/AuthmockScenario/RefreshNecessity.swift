import AuthmockModel
import Foundation

/// Why the client sent one refresh request, judged from what it had been
/// told before the request arrived (the answers the server had delivered to
/// it), never from how many connections it used or how it scheduled them.
///
/// - necessary: the newest access token the client held had expired, or an
///   answer had already rejected it (a 401, or GraphQL's in-body
///   `UNAUTHENTICATED`, for that very token, sent as a
///   Bearer token: a 401 for a token without `Bearer ` refuses the missing
///   scheme, which a new token does not fix). A revoked token counts once a
///   401 has told the client.
/// - early: that token was still live and unrejected, with at most
///   max(60 s, half its lifetime) left: a refresh ahead of expiry, by the
///   client's own clock and margin. Allowed.
/// - superfluous: another refresh of the same login was still in flight; or
///   the server had already refused this login's refresh with a 4xx other
///   than 429, or in a GraphQL body (the session was over); or the client held a live, never rejected token with more than
///   that left (a late 401 for an older token answered by a second refresh).
struct RefreshJudgement: Sendable, Equatable {
    enum Kind: String, Sendable { case necessary, early, superfluous, unknown }
    var entry: JournalEntry
    var kind: Kind
    var reason: String
}

enum RefreshNecessity {
    /// A refresh of a live token counts as early with at most this many
    /// seconds left, or half its lifetime if that is longer: the early margins
    /// of real libraries (golang.org/x/oauth2 10 s, authlib 60 s) fit inside.
    static let earlyWindowFloor = 60.0

    static func judge(_ observation: Observation) -> [RefreshJudgement] {
        let tokens = observation.tokens
        let own = observation.entries.filter { !Observation.isForeign($0) }
        // Tokens handed to the client: the answer carried an access token and arrived.
        struct Issue { var jti: String; var family: String; var entry: JournalEntry; var deliveredAt: Date }
        let issues: [Issue] = own.compactMap { entry in
            guard let jti = entry.issuedAccess, let family = tokens.accessFamily[jti], let delivered = observation.deliveredAt(entry) else {
                return nil
            }
            return Issue(jti: jti, family: family, entry: entry, deliveredAt: delivered)
        }
        let refreshes = own.filter { $0.kind == .refresh }
        func familyOf(_ entry: JournalEntry) -> String? {
            entry.refreshToken?.id.flatMap { tokens.refreshFamily[$0] } ?? entry.accessToken?.id.flatMap { tokens.accessFamily[$0] }
        }

        return refreshes.map { refresh in
            guard let family = familyOf(refresh) else {
                let presented =
                    refresh.refreshToken?.state == .accessToken
                    ? "presents an access token (\(observation.labels.label(refresh.refreshToken?.id))) where the refresh token goes"
                    : "presents no token the server issued"
                return RefreshJudgement(entry: refresh, kind: .unknown, reason: presented)
            }
            let arrival = refresh.realTime
            let others = refreshes.filter { $0.seq < refresh.seq && familyOf($0) == family }
            if let inFlight = others.first(where: { Observation.end($0) > arrival }) {
                return RefreshJudgement(entry: refresh, kind: .superfluous, reason: "refresh #\(inFlight.seq) of this login was still in flight")
            }
            let held = issues.filter { $0.family == family && $0.deliveredAt < arrival }
            // 429 says "later", not "never": the session goes on.
            if let refused = others.last(where: \.refused),
                !held.contains(where: { $0.entry.seq > refused.seq })
            {
                return RefreshJudgement(
                    entry: refresh, kind: .superfluous,
                    reason:
                        "the server had already refused this login's refresh (#\(refused.seq) -> \(refused.status)\(refused.errorCode.map { " \($0)" } ?? "")): the session was over"
                )
            }
            guard let newest = held.max(by: { $0.entry.seq < $1.entry.seq }) else {
                return RefreshJudgement(entry: refresh, kind: .necessary, reason: "the client had been handed no access token of this login yet")
            }
            let token = "the newest access token the client held (\(observation.labels.label(newest.jti)), issued by #\(newest.entry.seq))"
            // A backend's token seen through a proxy may say no end (no `exp`, no `expires_in`).
            let expiry = tokens.accessExpiry[newest.jti]
            if let expiry, refresh.virtualTime.timeIntervalSince(expiry) >= 0 {
                let expiredFor = refresh.virtualTime.timeIntervalSince(expiry)
                return RefreshJudgement(
                    entry: refresh, kind: .necessary, reason: "\(token) had expired \(String(format: "%.1f", expiredFor)) s before")
            }
            if let rejection = own.first(where: { entry in
                entry.kind == .resource && entry.accessToken?.id == newest.jti && entry.scheme == "Bearer" && entry.refusedCredentials
                    && !entry.undelivered
                    && Observation.end(entry) <= arrival
            }) {
                return RefreshJudgement(
                    entry: refresh, kind: .necessary,
                    reason:
                        "\(token) had been rejected (#\(rejection.seq) -> \(rejection.status)\(rejection.status == 401 ? "" : " " + (rejection.errorCode ?? "")))"
                )
            }
            guard let expiry else {
                return RefreshJudgement(
                    entry: refresh, kind: .necessary,
                    reason: "\(token) says no end (no exp, no expires_in), so no refresh of it is judged early")
            }
            // The window is measured against the lifetime the token was issued
            // with: a later retirement (a rotation) pulls `expiry` forward, but
            // the client knew only `expires_in`.
            let lifetime = tokens.accessLifetime[newest.jti] ?? expiry.timeIntervalSince(newest.entry.virtualTime)
            let issued = tokens.accessIssued[newest.jti] ?? newest.entry.virtualTime
            let left = issued.addingTimeInterval(lifetime).timeIntervalSince(refresh.virtualTime)
            let window = max(earlyWindowFloor, lifetime / 2)
            let life = String(format: "%.0f s left of %.0f s", left, lifetime)
            if left <= window {
                return RefreshJudgement(entry: refresh, kind: .early, reason: "\(token) was live, \(life): a refresh ahead of expiry")
            }
            return RefreshJudgement(
                entry: refresh, kind: .superfluous,
                reason:
                    "\(token) was live and never rejected, \(life), delivered to it \(String(format: "%.3f", arrival.timeIntervalSince(newest.deliveredAt))) s before this refresh"
            )
        }
    }
}
