import AuthmockModel

/// `refresh_token_reuse`: every request that presented a refresh token
/// another request had already exchanged, and that the server did not
/// accept (a presentation inside the reuse grace window is accepted).
struct RefreshTokenReuseExpectation: CountingExpectation {
    static let key = "refresh_token_reuse"
    static let shape = CountRange.shape
    static let doc =
        "every refresh request presenting a refresh token another request had already exchanged, and whose answer reached the client, that the server refused (a 4xx other than 429; a server with reuse detection revokes the login on it). A presentation that got no answer, a 5xx or a 429 spent nothing, and the retry of a refresh whose answer was lost is the client's right"
    static let rule = Rules.rotation
    let range: CountRange

    /// Every presentation of a spent refresh token: the token was rotated by
    /// one request, and this one presented it too and got nothing for it.
    /// Judged from the answers, not from the state at arrival, so requests
    /// that raced the rotating one and every later one are all counted. Only
    /// a refusal (a 4xx other than 429, or the dialect's refusal in a 2xx) is a reuse: a presentation that got
    /// no answer, a 5xx or a 429 (a fault, a busy server) spent nothing, and
    /// its retry is the client's right.
    ///
    /// `knownToClient`: only tokens whose exchange reached the client count
    /// (the client's reuse); without it, every presentation of a rotated
    /// token (what the server saw, a lost answer's retry too).
    static func reuses(in entries: [JournalEntry], knownToClient: Bool = false) -> [JournalEntry] {
        var rotatedBy: [String: Int] = [:]
        for entry in entries where entry.kind == .refresh && !entry.failed && !(knownToClient && entry.undelivered) {
            if let id = entry.refreshToken?.id, let next = entry.issuedRefresh, next != id, rotatedBy[id] == nil { rotatedBy[id] = entry.seq }
        }
        return entries.filter { entry in
            guard entry.kind == .refresh, let id = entry.refreshToken?.id, let winner = rotatedBy[id], winner != entry.seq else { return false }
            return entry.issuedAccess == nil && entry.refused
        }
    }

    func judge(_ observation: Observation) -> Judgement {
        let reused = Self.reuses(in: observation.entries, knownToClient: true)
        return Judgement(
            passed: range.admits(reused.count),
            message: "expected \(range.of("refresh request")) with an already rotated refresh token, saw \(reused.count)"
                + (reused.isEmpty ? "" : ": journal \(observation.seqs(reused))")
                + (!reused.isEmpty && observation.reuseRevokesLogin ? "; reuse detection revoked the login" : ""),
            evidence: observation.lines(reused), measured: [range.measure("refresh token reuses", saw: reused.count)],
            entries: reused.map(\.seq))
    }
}
