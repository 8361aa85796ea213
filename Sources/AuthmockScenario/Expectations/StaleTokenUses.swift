import AuthmockModel
import Foundation

/// `stale_token_uses`: requests to the API with an access token older than
/// one the server had already delivered to the client, for the same login.
struct StaleTokenUsesExpectation: CountingExpectation {
    static let key = "stale_token_uses"
    static let shape = CountRange.shape
    static let doc =
        "requests to the API with an access token older than one already delivered to the client (delivered: 50 ms after the answer, or as soon as the driver reported that call)"
    static let rule = Rules.caseReports
    let range: CountRange

    static func staleUses(_ observation: Observation) -> [JournalEntry] {
        struct Issue { var jti: String; var seq: Int; var deliveredAt: Date? }
        var issuesByFamily: [Int: [Issue]] = [:]
        var issueSeq: [String: Int] = [:]
        // The login of each token: the token core's family where its snapshot
        // still has it (an expired token may be pruned), else the journal's.
        func family(_ jti: String) -> Int? { observation.labels.login(of: jti) }
        for entry in observation.entries {
            guard let jti = entry.issuedAccess, let family = family(jti) else { continue }
            let delivered = observation.deliveredAt(entry)
            issuesByFamily[family, default: []].append(Issue(jti: jti, seq: entry.seq, deliveredAt: delivered))
            issueSeq[jti] = entry.seq
        }
        return observation.resources.filter { entry in
            guard let jti = entry.accessToken?.id, let family = family(jti), let mine = issueSeq[jti] else { return false }
            return issuesByFamily[family, default: []].contains { issue in
                issue.seq > mine && (issue.deliveredAt.map { $0 <= entry.realTime } ?? false)
            }
        }
    }

    func judge(_ observation: Observation) -> Judgement {
        let stale = Self.staleUses(observation)
        return Judgement(
            passed: range.admits(stale.count),
            message: "expected \(range.of("request")) with an access token older than one the client had already received, saw \(stale.count)"
                + (stale.isEmpty ? "" : ": journal \(observation.seqs(stale))"),
            evidence: observation.lines(stale), measured: [range.measure("stale token uses", saw: stale.count)], entries: stale.map(\.seq))
    }
}
