import AuthmockModel
import Foundation

/// `expired_token_uses`: requests to the API with an access token the client
/// itself had been told was over: its `expires_in`, counted from when the
/// answer reached the client, had run out (plus a second for clients that
/// round to whole seconds). Judged by the client's knowledge and the wall
/// clock only, never the server's clock, so it asks to renew before
/// sending (Apollo's `UserManagementInterceptor`, golang.org/x/oauth2).
struct ExpiredTokenUsesExpectation: CountingExpectation {
    static let key = "expired_token_uses"
    static let shape = CountRange.shape
    static let doc =
        "requests to the API with an access token whose `expires_in`, counted from when the answer reached the client, had run out (with a second of slack): what renewing before sending avoids"
    static let rule = "a client that knows the token's lifetime renews it before sending (the case's reports)"
    let range: CountRange

    /// Seconds past the announced expiry before a use counts.
    static let slack = 1.0

    static func uses(_ observation: Observation) -> [(JournalEntry, Double)] {
        var known: [String: Date] = [:]
        for entry in observation.entries {
            guard let jti = entry.issuedAccess, let lifetime = observation.tokens.accessLifetime[jti], let delivered = observation.deliveredAt(entry)
            else { continue }
            known[jti] = delivered.addingTimeInterval(lifetime)
        }
        return observation.resources.compactMap { entry in
            guard let jti = entry.accessToken?.id, let over = known[jti] else { return nil }
            let late = entry.realTime.timeIntervalSince(over)
            return late > slack ? (entry, late) : nil
        }
    }

    func judge(_ observation: Observation) -> Judgement {
        let uses = Self.uses(observation)
        return Judgement(
            passed: range.admits(uses.count),
            message: "expected \(range.of("request")) with an access token past its expires_in, saw \(uses.count)"
                + (uses.isEmpty ? "" : ": journal \(observation.seqs(uses.map(\.0)))"),
            evidence: uses.prefix(12).map { observation.line($0.0) + String(format: " (%.1f s past its expires_in)", $0.1) },
            measured: [range.measure("expired token uses", saw: uses.count)], entries: uses.map(\.0.seq))
    }
}
