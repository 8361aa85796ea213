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

    /// An access token the journal saw issued: the entry that issued it,
    /// when that answer ended, and when the client surely had it (nil: never delivered).
    struct Issue { var jti: String; var seq: Int; var end: Date; var deliveredAt: Date? }

    /// Every issued access token by login (the token core's family where
    /// its snapshot still has it, an expired one may be pruned, else the journal's).
    static func issues(_ observation: Observation) -> (byLogin: [Int: [Issue]], seq: [String: Int]) {
        var byLogin: [Int: [Issue]] = [:]
        var seq: [String: Int] = [:]
        for entry in observation.entries {
            guard let jti = entry.issuedAccess, let login = observation.labels.login(of: jti) else { continue }
            byLogin[login, default: []].append(
                Issue(jti: jti, seq: entry.seq, end: Observation.end(entry), deliveredAt: observation.deliveredAt(entry)))
            seq[jti] = entry.seq
        }
        return (byLogin, seq)
    }

    /// Whether some issue of the login of `jti`, newer than it, passes `test`.
    static func newerIssue(
        than jti: String, _ index: (byLogin: [Int: [Issue]], seq: [String: Int]), _ observation: Observation, _ test: (Issue) -> Bool
    ) -> Bool {
        guard let login = observation.labels.login(of: jti), let mine = index.seq[jti] else { return false }
        return index.byLogin[login, default: []].contains { $0.seq > mine && test($0) }
    }

    static func staleUses(_ observation: Observation) -> [JournalEntry] {
        let index = issues(observation)
        return observation.resources.filter { entry in
            guard let jti = entry.accessToken?.id else { return false }
            return newerIssue(than: jti, index, observation) { issue in issue.deliveredAt.map { $0 <= entry.realTime } ?? false }
        }
    }

    /// Retries that carried the very token a 401 had refused their call,
    /// sent after the server had finished an answer handing out a newer token
    /// of that login. The stale-use count gives a request in flight 50 ms of
    /// slack; a retry waits for its 401, so one that started after the newer
    /// token's answer ended (a client that waited for the refresh and then
    /// ignored what it brought, however loaded the machine) is stale already.
    static func retriesPastNewer(_ observation: Observation) -> [JournalEntry] {
        let index = issues(observation)
        return observation.calls.flatMap { record in
            let tries = observation.attempts(of: record.call)
            return tries.enumerated().filter { place, retry in
                guard place > 0, let jti = retry.accessToken?.id,
                    tries[..<place].contains(where: { $0.refusedCredentials && $0.accessToken?.id == jti })
                else { return false }
                return newerIssue(than: jti, index, observation) { $0.deliveredAt != nil && $0.end <= retry.realTime }
            }.map(\.element)
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
