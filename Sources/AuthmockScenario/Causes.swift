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
}

/// What a diagnosis reads: the case's journal and calls, and the keys of the
/// expectations that failed.
struct Symptoms {
    let observation: Observation
    let failed: Set<String>
    let refreshes: [RefreshJudgement]

    init(_ observation: Observation, failed: [Finding]) {
        self.observation = observation
        self.failed = Set(failed.map { $0.expectation.hasPrefix("check.") ? String($0.expectation.dropFirst(6)) : $0.expectation })
        refreshes = RefreshNecessity.judge(observation)
    }

    /// A 401 (or GraphQL's UNAUTHENTICATED) for a Bearer token reached the
    /// client, and no refresh or sign-in of its own followed it.
    var refusalWithoutRefresh: Bool {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        guard let refusal = own.first(where: { $0.kind == .resource && $0.presentsBearer && $0.refusedCredentials && !$0.undelivered }) else {
            return false
        }
        return !own.contains { $0.seq > refusal.seq && [.refresh, .login].contains($0.kind) && !observation.isSignInStep($0) }
    }

    /// A call ended `reauth_required` and no refresh answer had refused the
    /// refresh token (a 4xx other than 429): the sign-in screen came from a
    /// 5xx, a 429 or a reset.
    var signedOutUnrefused: Bool {
        observation.calls.contains { $0.outcome == OutcomeKind.reauthRequired.rawValue }
            && !observation.refreshes.contains(where: Observation.refusesRefreshToken)
    }

    /// A call ended in the client's own error, and no refresh request was
    /// ever sent: the renewal broke inside the library.
    var failedWithoutRefreshing: Bool {
        observation.refreshes.isEmpty && observation.calls.contains { $0.outcome == OutcomeKind.transportError.rawValue }
    }

    /// A request of a call that had a body reached the server: without one,
    /// a failed body check says nothing of what a retry sent.
    var aBodyReachedTheServer: Bool {
        observation.calls.contains { $0.spec.body != nil && !observation.attempts(of: $0.call).isEmpty }
    }

    func superfluous(_ reason: String) -> Bool {
        refreshes.contains { $0.kind == .superfluous && $0.reason.contains(reason) }
    }
}

enum Causes {
    /// A cause and how to recognise it.
    struct Entry: Sendable {
        var cause: Cause
        /// Expectations whose failure it can explain.
        var explains: Set<String>
        /// Whether the case's journal shows it.
        var shows: @Sendable (Symptoms) -> Bool
    }

    /// Most telling first. Refreshes beside one in flight are judged before
    /// anything else (a client without single flight may also leave a call
    /// with its 401 once its login is revoked). A client that never refreshes
    /// after a 401 fails the count, outcome and reuse expectations of every
    /// server-expired case for that one reason, so nothing else is said of
    /// those cases.
    static let table: [Entry] = [
        Entry(
            cause: Cause(id: "no-single-flight", title: "refreshes (or signs in) beside a refresh already in flight: no single flight"),
            explains: [
                "superfluous_refreshes", "superfluous_sign_ins", "refreshes", "refresh_token_reuse", "outcomes", "unfounded_reauth", "logins",
            ],
            shows: { $0.superfluous("still in flight") || $0.failed.contains("superfluous_sign_ins") }),
        Entry(
            cause: Cause(id: "no-refresh-after-401", title: "never refreshes after a 401 (refreshes only by its own clock, or not at all)"),
            explains: [
                "refreshes", "outcomes", "superfluous_refreshes", "retried_with_new_token", "same_body_on_retry", "bodies_intact",
                "retry_after", "mutations_per_call", "unfounded_reauth", "refresh_token_reuse", "attempts_per_call", "logins", "wait_for",
            ],
            shows: {
                $0.refusalWithoutRefresh
                    && !$0.failed.isDisjoint(with: ["refreshes", "outcomes", "retried_with_new_token", "mutations_per_call", "wait_for"])
            }),
        Entry(
            cause: Cause(
                id: "refresh-fails-in-client",
                title: "fails inside the client when the token needs renewing: no refresh request is sent, calls end in an error"
            ),
            explains: ["refreshes", "outcomes", "wait_for", "bodies_intact", "retried_with_new_token", "attempts_per_call"],
            shows: { $0.failedWithoutRefreshing && !$0.failed.isDisjoint(with: ["refreshes", "wait_for"]) }),
        Entry(
            cause: Cause(id: "refresh-after-refusal", title: "refreshes again after the server refused the refresh token"),
            explains: ["superfluous_refreshes", "refreshes", "max_requests", "attempts_per_call"],
            shows: { $0.superfluous("already refused") }),
        Entry(
            cause: Cause(id: "second-refresh-for-late-401", title: "refreshes again for a 401 that answered an older token"),
            explains: ["superfluous_refreshes", "refreshes"],
            shows: { $0.superfluous("live and never rejected") }),
        Entry(
            cause: Cause(id: "spent-refresh-token", title: "presents a refresh token that was already rotated or spent"),
            explains: ["refresh_token_reuse", "outcomes", "unfounded_reauth"],
            shows: { $0.failed.contains("refresh_token_reuse") }),
        Entry(
            cause: Cause(id: "signs-out-unrefused", title: "sends the user to sign in although no refresh was refused (a 5xx, a 429 or a reset)"),
            explains: ["unfounded_reauth", "outcomes"],
            shows: { $0.failed.contains("unfounded_reauth") || $0.failed.contains("outcomes") && $0.signedOutUnrefused }),
        Entry(
            cause: unbounded,
            explains: ["attempts_per_call", "max_requests", "refreshes"],
            shows: { !$0.failed.isDisjoint(with: ["attempts_per_call", "max_requests"]) }),
        Entry(
            cause: Cause(id: "token-to-third-party", title: "sends the bearer token to another host"),
            explains: ["foreign_requests_with_token", "refreshes", "outcomes"],
            shows: { $0.failed.contains("foreign_requests_with_token") }),
        Entry(
            cause: Cause(id: "retry-loses-request", title: "a retry loses what the application sent (its headers or body)"),
            explains: ["app_headers", "bodies_intact", "same_body_on_retry", "every_attempt"],
            shows: { symptoms in
                let lost = symptoms.failed.intersection(["app_headers", "bodies_intact", "same_body_on_retry", "every_attempt"])
                // A body never sent (the client failed before it) is not a body a retry lost.
                return !lost.isEmpty && (lost != ["bodies_intact"] || symptoms.aBodyReachedTheServer)
            }),
        Entry(
            cause: Cause(id: "ignores-retry-after", title: "retries before Retry-After"),
            explains: ["retry_after"],
            shows: { $0.failed.contains("retry_after") }),
        Entry(
            cause: Cause(id: "no-retry-of-503", title: "hands a 503 or 429 to the application without retrying it (its transport's policy)"),
            explains: ["outcomes"],
            shows: { symptoms in
                symptoms.observation.calls.contains { $0.outcome == OutcomeKind.httpError.rawValue && [429, 503].contains($0.answer?.status ?? 0) }
            }),
        Entry(
            cause: Cause(
                id: "missed-the-refusal",
                title: "its calls never met the refusal the case is about: the server refused them for another reason first (their credentials)"),
            explains: ["answered_with"],
            shows: { $0.failed.contains("answered_with") }),
        Entry(
            cause: Cause(id: "unproven-answers", title: "reports answers the wire does not show"),
            explains: ["calls_on_the_wire"],
            shows: { $0.failed.contains("calls_on_the_wire") }),
    ]

    /// The causes of one case's failed findings; empty when nothing failed.
    static let unbounded = Cause(id: "unbounded", title: "does not stop by itself: retries or refreshes past any bound")

    static func diagnose(_ observation: Observation, failed: [Finding]) -> [Cause] {
        guard !failed.isEmpty else { return [] }
        let symptoms = Symptoms(observation, failed: failed)
        var causes: [Cause] = []
        var unexplained = symptoms.failed
        for entry in table where !unexplained.isDisjoint(with: entry.explains) && entry.shows(symptoms) {
            causes.append(entry.cause)
            unexplained.subtract(entry.explains)
        }
        // Every failure belongs to a group: one no cause explains is named by its expectation.
        if causes.isEmpty, let first = failed.first {
            let key = first.expectation.hasPrefix("check.") ? String(first.expectation.dropFirst(6)) : first.expectation
            causes.append(Cause(id: "expectation:\(key)", title: "breaks `\(key)`"))
        }
        return causes
    }

    /// Case runs by cause, most first: the report's "one cause, once".
    static func groups(_ results: [CaseResult]) -> [(cause: Cause, labels: [String])] {
        var order: [Cause] = []
        var labels: [String: [String]] = [:]
        for result in results where [.fail, .nonStrict].contains(result.verdict) || result.knownFailure != nil {
            for cause in result.causes ?? [] {
                if labels[cause.id] == nil { order.append(cause) }
                labels[cause.id, default: []].append(result.label)
            }
        }
        return order.map { ($0, labels[$0.id] ?? []) }.sorted { $0.labels.count > $1.labels.count }
    }
}
