import AuthmockModel
import Foundation

/// `old_login_tokens`: requests that presented a token (access or refresh)
/// of an earlier login after the driver had confirmed a later sign-in: an
/// account switch, a sign-in after a refused refresh. A cache the sign-in
/// did not replace, or the late answer of a refresh begun before it written
/// over the new session, shows here; `stale_token_uses` goes by one
/// login's order and `requests_after_logout` counts the new login's calls too.
struct OldLoginTokensExpectation: CountingExpectation {
    static let key = "old_login_tokens"
    static let shape = CountRange.shape
    static let doc =
        "requests that presented a token (access or refresh) of an earlier login after the driver confirmed a later `login` step; revocations excepted"
    static let rule = Rules.caseReports
    let range: CountRange

    /// The sign-ins the driver confirmed, in order: when it reported each,
    /// and the login the server made in it.
    static func confirmedLogins(_ observation: Observation) -> [(at: Date, login: Int)] {
        observation.signInSteps.compactMap { step in
            let made = observation.entries.filter { $0.kind == .login && step.contains($0.realTime) }
                .compactMap { observation.labels.login(of: $0.issuedAccess ?? $0.issuedRefresh) }.max()
            return made.map { (step.upperBound, $0) }
        }
    }

    static func uses(_ observation: Observation, logins: [(at: Date, login: Int)]? = nil) -> [JournalEntry] {
        let logins = logins ?? confirmedLogins(observation)
        guard logins.count > 1 else { return [] }
        return observation.entries.filter { entry in
            guard entry.kind != .revoke, !Observation.isForeign(entry),
                let newest = logins.filter({ $0.at < entry.realTime }).map(\.login).max()
            else { return false }
            let presented = [entry.accessToken?.id, entry.refreshToken?.id].compactMap { observation.labels.login(of: $0) }
            return presented.contains { $0 < newest }
        }
    }

    func judge(_ observation: Observation) -> Judgement {
        let logins = Self.confirmedLogins(observation)
        guard logins.count > 1 else {
            return Judgement.nothingToJudge("the case confirmed \(logins.count) sign-in, so no login is older than another")
        }
        let old = Self.uses(observation, logins: logins)
        return Judgement(
            passed: range.admits(old.count),
            message: "expected \(range.of("request")) with an earlier login's token after a later sign-in, saw \(old.count)"
                + (old.isEmpty ? "" : ": journal \(observation.seqs(old))"),
            evidence: observation.lines(old), measured: [range.measure("earlier logins' token uses", saw: old.count)], entries: old.map(\.seq))
    }
}
