import AuthmockCore
import AuthmockModel
import AuthmockServer
import DriverProtocol
import Foundation

/// A call the runner made, and what the driver answered.
struct CallRecord: Sendable {
    var call: String
    var driverID: String
    var spec: CallSpec
    var answer: DriverAnswer?
    /// When the runner sent it (wall clock).
    var sentAt: Date
    /// When the runner cancelled it (a `cancel` step).
    var cancelledAt: Date?

    /// Its method and path, and for a call of another instance of the app
    /// (its extension) which one: wherever the call is shown.
    var requestLine: String {
        "\(spec.method) \(spec.path)" + (spec.otherInstance.map { " (instance \($0))" } ?? "")
    }

    /// The outcome kind's name, or `unanswered`, or `unknown` for an answer without one.
    var outcome: String {
        guard let answer else { return "unanswered" }
        return answer.outcome?.rawValue ?? (answer.ok ? OutcomeKind.ok.rawValue : "unknown")
    }

    /// What the report keeps of it; times in seconds since `start`.
    func summary(start: Date) -> CallOutcome {
        var summary = CallOutcome(
            call: call, request: "\(spec.method) \(spec.path)", outcome: outcome, status: answer?.status, message: answer?.message)
        summary.instance = spec.otherInstance
        summary.sent = (sentAt.timeIntervalSince(start) * 1000).rounded() / 1000
        summary.answered = answer.map { ($0.receivedAt.timeIntervalSince(start) * 1000).rounded() / 1000 }
        summary.cancelled = cancelledAt.map { ($0.timeIntervalSince(start) * 1000).rounded() / 1000 }
        return summary
    }
}

/// What the server's token core knows about the tokens of a case, for
/// judging the journal: which login each token belongs to and when each
/// access token expires (pulled forward when a step expired it).
struct TokenFacts: Sendable {
    var accessFamily: [String: String] = [:]
    var accessExpiry: [String: Date] = [:]
    /// When each access token was issued and the lifetime it was issued with.
    var accessIssued: [String: Date] = [:]
    var accessLifetime: [String: Double] = [:]
    var refreshFamily: [String: String] = [:]
    var refreshExpiry: [String: Date] = [:]

    init() {}

    init(_ snapshot: TokenSnapshot) {
        for token in snapshot.access {
            if let family = token.family { accessFamily[token.id] = family }
            accessExpiry[token.id] = token.expiresAt
            if let issued = token.issuedAt { accessIssued[token.id] = issued }
            if let lifetime = token.lifetimeSeconds { accessLifetime[token.id] = lifetime }
        }
        for token in snapshot.refresh {
            if let family = token.family { refreshFamily[token.id] = family }
            refreshExpiry[token.id] = token.expiresAt
        }
    }
}

/// Everything a case's expectations are judged from: the journal, the
/// calls and their outcomes, and the token facts. Requests that lost their
/// `X-Authmock-Call` header are attributed to their call where the timing
/// and the request line leave only one candidate.
struct Observation {
    let entries: [JournalEntry]
    let calls: [CallRecord]
    let tokens: TokenFacts
    let start: Date
    /// The dialect's sign-in and refresh paths (trailing slash dropped).
    let endpointPaths: Set<String>
    /// seq of an untagged request -> the call it was attributed to.
    let attributed: [Int: String]
    /// The calls are recognised from the traffic (`--judge`), not scripted.
    let recognisedCalls: Bool
    /// The case's tokens by login and generation (`A1`, `R2`).
    let labels: TokenLabels
    /// When the driver confirmed the app had signed the user out (`logout` step).
    var signedOutAt: Date?
    /// When the runner asked the driver to sign out (its sign-out request may come before the answer).
    var signOutRequestedAt: Date?
    /// The calls the case cancelled (`cancel` steps), and when the runner sent each cancel.
    var cancels: [(call: String, at: Date)] { calls.compactMap { call in call.cancelledAt.map { (call.call, $0) } } }
    /// The case's `login` steps, from the runner's message to the driver's
    /// answer: sign-ins the application asked for.
    var signInSteps: [ClosedRange<Date>] = []
    /// How the server's dialect answers the refusals a case may name
    /// (`answered_with`): status and code.
    var refusals: [String: (status: Int, code: String)] = [:]
    /// Fault rules the case installed that hand out a forged id token (their ids).
    var idTokenFaults: Set<Int> = []
    /// What each of the case's fault rules does, by id: journal lines say it beside the rule's number.
    var faultActions: [Int: String] = [:]
    /// The last entry the verdict read (`CaseResult.judgedThrough`): later ones are shown as late.
    var judgedThrough: Int?
    /// The server revokes a login whose rotated refresh token comes back
    /// (`refresh_reuse: revoke_login`): findings about reuse say so only then.
    var reuseRevokesLogin = false

    /// Whether `entry` arrived during one of the case's `login` steps.
    /// Only a sign-in request can be one: a refresh that arrives while the
    /// app signs in is the client's own (a refresh started beside the 401
    /// the app was handed, case 9.4).
    func isSignInStep(_ entry: JournalEntry) -> Bool { entry.kind == .login && signInSteps.contains { $0.contains(entry.realTime) } }
    /// A renewal the client made of its own: a refresh, or a sign-in no `login` step asked for.
    func isOwnRenewal(_ entry: JournalEntry) -> Bool { [.refresh, .login].contains(entry.kind) && !isSignInStep(entry) }
    /// Access token -> when a request first presented it (the client had it then).
    private let firstUse: [String: Date]
    /// Call -> when the driver reported its outcome (the client had every answer of it then).
    private let callAnswered: [String: Date]

    /// Seconds of slack before a delivered token counts as known to the client.
    static let deliveryMargin = 0.05

    /// The host name the server has for third parties (`//foreign/` paths).
    static let foreignHost = "localhost"

    /// `endpointPaths`: the dialect's sign-in and refresh paths, which may
    /// lie under `/api/` (`/api/token/refresh/`).
    /// `recognisingCalls`: traffic no runner scripted (`--judge`), whose
    /// requests carry no call header: its calls are recognised from the
    /// requests themselves (`RecognisedCalls`).
    init(
        entries: [JournalEntry], calls: [CallRecord], tokens: TokenFacts, start: Date, endpointPaths: Set<String> = [],
        recognisingCalls: Bool = false
    ) {
        self.entries = entries
        self.calls = calls
        self.tokens = tokens
        self.start = start
        self.endpointPaths = endpointPaths
        let labels = TokenLabels(entries, accessFamily: tokens.accessFamily, refreshFamily: tokens.refreshFamily)
        self.labels = labels
        attributed =
            recognisingCalls
            ? RecognisedCalls.recognise(entries, labels: labels) { Self.isCallAttempt($0, endpointPaths: endpointPaths) }
            : Self.attribute(entries, calls, endpointPaths: endpointPaths)
        recognisedCalls = recognisingCalls
        var firstUse: [String: Date] = [:]
        for entry in entries { if let jti = entry.accessToken?.id, firstUse[jti] == nil { firstUse[jti] = entry.realTime } }
        self.firstUse = firstUse
        var answered: [String: Date] = [:]
        for record in calls { if let answer = record.answer { answered[record.call] = answer.receivedAt } }
        callAnswered = answered
    }

    /// When the client surely had an answer that handed it a token: 50 ms
    /// after the server finished it, or earlier where the journal proves it:
    /// the driver had already reported the call the answer belonged to, the
    /// call's next attempt had started after it (a header rotation's answer
    /// is the call's own: a retry comes after reading it), or a request had
    /// already presented the token. nil: never delivered.
    func deliveredAt(_ entry: JournalEntry) -> Date? {
        guard !entry.failed, !entry.undelivered else { return nil }
        let end = Self.end(entry)
        var when = end.addingTimeInterval(Self.deliveryMargin)
        if let call = call(of: entry) {
            if let answered = callAnswered[call] { when = min(when, answered) }
            if let next = attempts(of: call).first(where: { $0.seq > entry.seq && $0.realTime >= end }) { when = min(when, next.realTime) }
        }
        if let jti = entry.issuedAccess, let used = firstUse[jti] { when = min(when, used) }
        return when
    }

    static func isForeign(_ entry: JournalEntry) -> Bool { entry.host?.hasPrefix(foreignHost + ":") == true }
    func isForeign(_ entry: JournalEntry) -> Bool { Self.isForeign(entry) }

    /// Requests the application's calls make: to the API (a refresh-on-resources
    /// refresh is the call repeated with the refresh token; a refresh
    /// endpoint under `/api/` is not the API).
    static func isCallAttempt(_ entry: JournalEntry, endpointPaths: Set<String>) -> Bool {
        guard entry.kind == .refresh else { return entry.kind == .resource }
        let path = entry.path.count > 1 && entry.path.hasSuffix("/") ? String(entry.path.dropLast()) : entry.path
        return RouteClassification.isResource(path: entry.path) && !endpointPaths.contains(path)
    }

    func isCallAttempt(_ entry: JournalEntry) -> Bool { Self.isCallAttempt(entry, endpointPaths: endpointPaths) }

    var resources: [JournalEntry] { entries.filter { $0.kind == .resource && !isForeign($0) } }
    var refreshes: [JournalEntry] { entries.filter { $0.kind == .refresh && !isForeign($0) } }

    /// The call an entry belongs to: its header, or the attribution.
    func call(of entry: JournalEntry) -> String? { entry.call ?? attributed[entry.seq] }

    /// The application's calls: the scripted ones, or those recognised in free traffic.
    var callIDs: [String] {
        guard recognisedCalls else { return calls.map(\.call) }
        var seen = Set<String>()
        // A request that names its call keeps that name; the rest were recognised.
        return entries.filter(isCallAttempt).compactMap(call(of:)).filter { seen.insert($0).inserted }
    }

    /// The calls that carry a body: as scripted, or (recognised) whose first request had one.
    var callsWithBody: [String] {
        guard recognisedCalls else { return calls.filter { $0.spec.body != nil }.map(\.call) }
        return callIDs.filter { (attempts(of: $0).first?.bodyBytes ?? 0) > 0 }
    }

    /// Attempts of an application call on its own server, in arrival order.
    func attempts(of call: String) -> [JournalEntry] {
        entries.filter { self.call(of: $0) == call && !isForeign($0) && isCallAttempt($0) }
    }

    /// Attempts of a call on any host (a call to a third party included).
    func anyAttempts(of call: String) -> [JournalEntry] {
        entries.filter { self.call(of: $0) == call && isCallAttempt($0) }
    }

    /// Call attempts that arrived without the `X-Authmock-Call` header the
    /// application gave them: the client dropped the app's headers.
    var untagged: [JournalEntry] { entries.filter { $0.call == nil && isCallAttempt($0) } }

    /// When the client had the whole answer: arrival, handling and any hold.
    static func end(_ entry: JournalEntry) -> Date { entry.realTime.addingTimeInterval(entry.durationMs / 1000) }

    func lines(_ selected: [JournalEntry], limit: Int = 12) -> [String] {
        var out = selected.prefix(limit).map(line)
        if selected.count > limit { out.append("... and \(selected.count - limit) more") }
        return out
    }

    func line(_ entry: JournalEntry) -> String {
        var text = describe(entry, start: start, labels: labels, faults: faultActions)
        if entry.call == nil, let call = attributed[entry.seq] {
            text += recognisedCalls ? " (\(call))" : " (no call header; attributed to \(call))"
        }
        if entry.kind == .refresh, let instance = instance(ofRefresh: entry) { text += " (for instance \(instance): only its calls were out)" }
        if isLate(entry) { text += " (late: after the case ended; no finding counted it)" }
        return text
    }

    /// The instance of the app (case 9.6: the app, its extension) a refresh
    /// was made for, where the case's calls come from several: the one whose
    /// calls alone were in flight when it was sent. nil in a case of one
    /// instance, or when calls of several were out.
    func instance(ofRefresh refresh: JournalEntry) -> Int? {
        guard Set(calls.map(\.spec.instanceNumber)).count > 1 else { return nil }
        let out = Set(
            calls.filter { $0.sentAt <= refresh.realTime && refresh.realTime <= ($0.answer?.receivedAt ?? .distantFuture) }.map(
                \.spec.instanceNumber))
        return out.count == 1 ? out.first : nil
    }

    /// The journal as the report's data, in arrival order.
    var reported: [ReportedEntry] {
        entries.map {
            ReportedEntry($0, start: start, labels: labels, attributedTo: attributed[$0.seq], faults: faultActions, late: isLate($0))
        }
    }

    func isLate(_ entry: JournalEntry) -> Bool { judgedThrough.map { entry.seq > $0 } ?? false }

    func seqs(_ selected: [JournalEntry], limit: Int = 10) -> String {
        let list = selected.prefix(limit).map { "#\($0.seq)" }.joined(separator: ", ")
        return selected.count > limit ? list + ", ..." : list
    }

    /// An untagged attempt belongs to the one call that was in flight when
    /// it arrived and asks for the same method and path, if there is one.
    private static func attribute(_ entries: [JournalEntry], _ calls: [CallRecord], endpointPaths: Set<String>) -> [Int: String] {
        var out: [Int: String] = [:]
        for entry in entries where entry.call == nil && isCallAttempt(entry, endpointPaths: endpointPaths) {
            let candidates = calls.filter { record in
                let (foreign, path) = target(of: record.spec.path)
                guard foreign == isForeign(entry), path == entry.path, record.spec.method == entry.method else { return false }
                guard record.sentAt <= entry.realTime else { return false }
                return record.answer.map { $0.receivedAt >= entry.realTime } ?? true
            }
            if candidates.count == 1 { out[entry.seq] = candidates[0].call }
        }
        return out
    }

    /// Whether a scenario path is for another host, and the server path it asks for.
    static func target(of specPath: String) -> (foreign: Bool, path: String) {
        var path = Substring(specPath)
        let foreign = path.hasPrefix("//foreign/")
        if foreign { path = path.dropFirst("//foreign".count) }
        if let query = path.firstIndex(of: "?") { path = path[..<query] }
        return (foreign, String(path))
    }
}

extension Observation {
    /// What the case's fault rules do, so the journal names the act beside the number.
    /// `cleared`: rules a `clear_faults` step removed, which ended their holds.
    mutating func noteFaults(_ installed: [FaultRuleView], cleared: Set<Int>) {
        for fault in installed {
            faultActions[fault.id] = cleared.contains(fault.id) ? fault.rule.action.didUntilCleared : fault.rule.action.did
            if case .idToken = fault.rule.action { idTokenFaults.insert(fault.id) }
        }
    }
}
