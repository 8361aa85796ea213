import AuthmockModel
import Foundation

/// `superfluous_sign_ins`, checked in every case: a sign-in the library made
/// by itself (a password, code or client-credentials grant outside the
/// case's `login` steps) is a refresh by another name, judged by the same
/// rules. It is superfluous while another refresh or sign-in was in flight,
/// or while the client held a refresh token the server had handed it and
/// never refused: a library that drops its cached token before refreshing,
/// so that concurrent callers each sign in again with the password, makes
/// one refresh and seven sign-ins for eight calls (1.5 counted only the
/// refresh).
enum SuperfluousSignIns {
    static let key = "superfluous_sign_ins"

    /// A finding when the library signed in by itself at least once; nil
    /// when it never did. `freeTraffic`: no case's steps say which sign-ins
    /// the application asked for (`--judge`), so every sign-in is judged.
    static func finding(_ observation: Observation, freeTraffic: Bool = false) -> Finding? {
        let own = observation.entries.filter { !Observation.isForeign($0) }
        let signIns = own.filter { entry in
            entry.kind == .login && !observation.isSignInStep(entry)
        }
        guard !signIns.isEmpty else { return nil }
        let judged = signIns.map { (entry: $0, reason: superfluousReason($0, own: own, observation: observation)) }
        let superfluous = judged.filter { $0.reason != nil }
        let counted = "\(signIns.count) sign-in\(signIns.count == 1 ? "" : "s")"
        var message =
            freeTraffic
            ? "expected 0 sign-ins while a refresh was in flight or a never refused refresh token was held (an account switch looks alike), saw \(superfluous.count) (of \(counted))"
            : "expected 0 superfluous sign-ins the library made by itself, saw \(superfluous.count) (of \(counted) outside the case's login steps)"
        if let first = superfluous.first, let reason = first.reason { message += "; #\(first.entry.seq): \(reason)" }
        let evidence = judged.prefix(12).map { "\(observation.line($0.entry))  [\($0.reason.map { "superfluous: \($0)" } ?? "necessary")]" }
        return Finding(
            expectation: key, passed: superfluous.isEmpty, message: message, evidence: superfluous.isEmpty ? [] : evidence,
            rule: Rules.singleFlight, level: Scenario.Level.must.rawValue)
    }

    /// Why `signIn` was superfluous, or nil when the client had nothing better to do.
    static func superfluousReason(_ signIn: JournalEntry, own: [JournalEntry], observation: Observation) -> String? {
        let arrival = signIn.realTime
        let earlier = own.filter { $0.seq < signIn.seq }
        if let inFlight = earlier.first(where: { [.refresh, .login].contains($0.kind) && Observation.end($0) > arrival }) {
            return "\(inFlight.kind == .refresh ? "refresh" : "sign-in") #\(inFlight.seq) was still in flight"
        }
        // The newest refresh token handed to the client before it signed in.
        let handed = earlier.filter { entry in
            guard entry.issuedRefresh != nil, let delivered = observation.deliveredAt(entry) else { return false }
            return delivered < arrival
        }
        guard let newest = handed.last, let token = newest.issuedRefresh else { return nil }
        if let signedOut = observation.signedOutAt, signedOut > observation.deliveredAt(newest) ?? arrival, signedOut < arrival { return nil }
        if let expiry = observation.tokens.refreshExpiry[token], expiry <= signIn.virtualTime { return nil }
        // Refused: a refresh of that login answered with a 4xx other than 429
        // (or credentials refused), which reached the client before it signed in.
        let family = observation.tokens.refreshFamily[token]
        let refused = earlier.contains { entry in
            guard entry.kind == .refresh, entry.seq > newest.seq, entry.refused, Observation.end(entry) <= arrival else {
                return false
            }
            let presented = entry.refreshToken?.id
            return presented == token || family != nil && presented.flatMap({ observation.tokens.refreshFamily[$0] }) == family
        }
        if refused { return nil }
        return "the client held refresh token \(observation.labels.label(token)) (issued by #\(newest.seq)), never refused: a refresh would have done"
    }
}
