import Foundation

/// The signed-in session: its tokens, and the one renewal at a time that
/// every call waiting for a token shares (single flight). A renewal that
/// ends after a sign-out or a new sign-in changes nothing.
actor TokenSession {
    private enum State {
        case signedOut(String)
        case active(Credentials)
    }

    private let endpoint: TokenEndpoint
    private let sharesRenewal: Bool
    private var state = State.signedOut("not signed in")
    /// The renewal under way, shared by every caller until it ends.
    private var renewal: (id: Int, task: Task<Credentials, any Error>)?
    private var renewals = 0
    /// Bumped by every sign-in and sign-out: a renewal from an earlier
    /// session cannot revive a session that has ended.
    private var epoch = 0

    init(endpoint: TokenEndpoint, sharesRenewal: Bool) {
        self.endpoint = endpoint
        self.sharesRenewal = sharesRenewal
    }

    func signIn(username: String, password: String) async throws {
        let answer: TokenEndpoint.Answer
        do {
            answer = try await endpoint.signIn(username: username, password: password)
        } catch {
            throw APIError.transport("\(error)")
        }
        switch answer {
        case .issued(let credentials):
            epoch += 1
            renewal = nil
            state = .active(credentials)
        case .refused(let status, let body): throw APIError.signInRequired("sign-in refused (\(status)): \(body)")
        case .unavailable(let status): throw APIError.transport("the token endpoint answered \(status)")
        }
    }

    func signOut() {
        epoch += 1
        renewal = nil
        state = .signedOut("signed out")
    }

    /// The token to send: the current one, or a renewed one when this
    /// device's clock says it has expired or a renewal is under way.
    func token() async throws -> String {
        if let renewal { return try await renewal.task.value.accessToken }
        let credentials = try current()
        guard credentials.hasExpired() else { return credentials.accessToken }
        return try await renew(replacing: credentials.accessToken)
    }

    /// The server refused `stale` (a 401 asking for a new token): the token
    /// that replaced it if one already has (the 401 was late), else the
    /// shared renewal's.
    func renew(replacing stale: String) async throws -> String {
        if sharesRenewal, let renewal { return try await renewal.task.value.accessToken }
        let credentials = try current()
        if credentials.accessToken != stale && sharesRenewal { return credentials.accessToken }
        guard let refreshToken = credentials.refreshToken else {
            state = .signedOut("the token expired and there is no refresh token")
            throw APIError.signInRequired("the token expired and there is no refresh token")
        }
        renewals += 1
        let id = renewals
        let epoch = self.epoch
        let task = Task { try await self.performRenewal(refreshToken, id: id, epoch: epoch) }
        if sharesRenewal { renewal = (id, task) }
        return try await task.value.accessToken
    }

    private func current() throws -> Credentials {
        switch state {
        case .active(let credentials): return credentials
        case .signedOut(let reason): throw APIError.signInRequired(reason)
        }
    }

    private func performRenewal(_ refreshToken: String, id: Int, epoch: Int) async throws -> Credentials {
        defer { if renewal?.id == id { renewal = nil } }
        let answer: TokenEndpoint.Answer
        do {
            answer = try await endpoint.refresh(refreshToken)
        } catch {
            // The answer was lost: the refresh token may or may not be spent.
            // Once more at once, inside the grace window a server may keep for
            // the rotated token (case 3.5). If that fails too, the session
            // stays; the next call tries again, and the server says which.
            do {
                answer = try await endpoint.refresh(refreshToken)
            } catch {
                throw APIError.refreshUnavailable(status: nil, reason: "\(error)")
            }
        }
        guard epoch == self.epoch else { throw APIError.signInRequired("signed out while the token was being renewed") }
        switch answer {
        case .issued(let credentials):
            state = .active(credentials)
            return credentials
        case .refused(let status, let body):
            // The refresh token is dead: no call may try it again.
            state = .signedOut("the refresh token was refused (\(status)): \(body)")
            throw APIError.signInRequired("the refresh token was refused (\(status)): \(body)")
        case .unavailable(let status):
            throw APIError.refreshUnavailable(status: status, reason: "the token endpoint answered \(status)")
        }
    }
}
