import AuthmockModel

/// `signed_out_at_server`: after a `logout` step the client ended the login
/// at the backend's sign-out endpoint (a dialect's `sign_out`, oauth2's RFC
/// 7009 `/oauth/revoke`), presenting one of the login's tokens while it was
/// still good, and the server took it. A client that only forgets its tokens
/// leaves a copied refresh token working for days (OWASP MASVS-AUTH: the
/// remote endpoint terminates the session). Applies only where the
/// backend has such an endpoint.
struct SignedOutAtServerExpectation: FlagExpectation {
    static let key = "signed_out_at_server"
    static let doc =
        "after the `logout` step the client called the backend's sign-out endpoint (a dialect's `sign_out`, oauth2's `/oauth/revoke`) with a token of the login that was still good, and the server ended the login; a case with it runs only where the backend has such an endpoint"
    static let rule = Rules.caseReports
    let required: Bool

    func judgeRequired(_ observation: Observation) -> Judgement {
        guard let asked = observation.signOutRequestedAt else {
            return Judgement(passed: false, message: "the case has no logout step, so nothing was signed out", evidence: [])
        }
        let revocations = observation.entries.filter { $0.kind == .revoke && $0.realTime >= asked && !Observation.isForeign($0) }
        let ended = revocations.filter { entry in
            !entry.failed && !entry.undelivered
                && [entry.refreshToken, entry.accessToken].contains { $0?.state == .valid }
        }
        guard ended.isEmpty else {
            return Judgement(passed: true, message: "the client ended the login at the server: journal \(observation.seqs(ended))", evidence: [])
        }
        return Judgement(
            passed: false,
            message: revocations.isEmpty
                ? "the client forgot its tokens but never called the sign-out endpoint: the login lives on at the server"
                : "the client called the sign-out endpoint, but with no good token of the login, or the server refused it: journal \(observation.seqs(revocations))",
            evidence: observation.lines(revocations), entries: revocations.map(\.seq))
    }
}
