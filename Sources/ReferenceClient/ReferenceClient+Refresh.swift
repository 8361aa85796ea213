import DriverProtocol
import AsyncHTTPClient
import Foundation
import NIOHTTP1

extension ReferenceClient {
    typealias Triggering = (method: String, path: String, headers: [String: String], body: String?)

    /// One refresh for every call that saw generation `seen` fail; the answer
    /// is set only for the call whose own request was the refresh (header rotation).
    /// `alone`: a refresh outside the single flight (`refresh-on-reconnect`).
    func refresh(after seen: Int, triggering call: Triggering, alone: Bool = false) async -> (result: TokenStore.RefreshResult, answer: Answer?) {
        let served = AnswerBox()
        var seen = seen
        // Without the late-401 check, every 401 asks for a refresh of the current tokens.
        if faults.contains(.noLate401Check) { seen = await store.generation }
        let original = await store.refresh
        let logoutOnAnyError = faults.contains(.logoutOnAnyRefreshError)
        let result = await store.refresh(
            after: seen, singleFlight: !faults.contains(.refreshPer401), keepAbsentRefresh: !faults.contains(.forgetRefreshTokenWhenAbsent),
            acceptLateRefresh: faults.contains(.lateRefreshRevivesSession), outside: alone
        ) { access, refresh in
            var outcome = await self.performRefresh(access: access, refresh: refresh, call: call, served: served, depth: 0)
            // The bug: an endpoint that is down is taken for a dead refresh token.
            if logoutOnAnyError, case .unavailable(let status, let message) = outcome.0 {
                outcome.0 = .rejected(status: status, message: message)
            } else if case .unavailable(nil, _) = outcome.0, !self.faults.contains(.retryLostRefreshLater), !Task.isCancelled {
                // No answer at all: the server may have rotated the token and the
                // answer been lost. Once more at once, while a server's grace
                // window for the rotated token is still open (case 3.5).
                outcome = await self.performRefresh(access: access, refresh: refresh, call: call, served: served, depth: 0)
            }
            return outcome
        }
        if faults.contains(.keepFirstRefreshToken), case .refreshed = result { await store.restoreRefresh(original) }
        return (result, served.answer)
    }

    /// The dialect's refresh request. Never goes through the retrying call
    /// path, so a 401 from the refresh endpoint cannot recurse (unless the
    /// `recursive-refresh` fault says so).
    func performRefresh(
        access: String?, refresh: String?, call: Triggering, served: AnswerBox, depth: Int
    ) async -> (TokenStore.RefreshResult, access: String?, refresh: String?, lifetime: Double?) {
        guard let refresh else { return (.rejected(status: nil, message: "no refresh token"), nil, nil, nil) }
        do {
            let answer: Answer
            if refreshesOnResources {
                // The refresh is the call itself, repeated with the refresh token.
                answer = try await attempt(call.method, call.path, call.headers, call.body, token: nil, retry: true, bearer: refresh)
                if Self.isGraphQL(call.path), answer.graphQLUnauthenticated, !faults.contains(.statusOnlyGraphQL) {
                    return (.rejected(status: answer.status, message: "refresh refused: \(answer.body.prefix(200))"), nil, nil, nil)
                }
                if succeeded(answer) {
                    served.answer = answer
                    return (.refreshed, faults.contains(.ignoreRotatedHeader) ? nil : renewedAccessToken(in: answer), nil, nil)
                }
            } else if let dialect {
                answer = try await declaredRefresh(dialect, access: access, refresh: refresh)
            } else {
                answer = try await send(
                    "POST", "/oauth/token", headers: [basic, ("Content-Type", "application/x-www-form-urlencoded")],
                    body: Self.form([("grant_type", "refresh_token"), ("refresh_token", refresh)]))
            }
            if let key = errorIn2xx(answer) {
                // The dialect's error in a 2xx: a refusal, unless it is the server's own failure.
                let message = "refresh answered \(key): \(answer.body.prefix(200))"
                if ["store_unavailable", "internal_error"].contains(key) {
                    return (.unavailable(status: answer.status, message: message), nil, nil, nil)
                }
                if faults.contains(.recursiveRefresh), depth < 20 {
                    return await performRefresh(access: access, refresh: refresh, call: call, served: served, depth: depth + 1)
                }
                return (.rejected(status: answer.status, message: message), nil, nil, nil)
            }
            if (200..<300).contains(answer.status) {
                let (newAccess, newRefresh) = tokens(answer)
                guard let newAccess else {
                    return (.unavailable(status: answer.status, message: "refresh answer without an access token"), nil, nil, nil)
                }
                // An id token that names someone else ends the session: none of this answer is kept.
                if let refusal = await refusedIDToken(answer, access: newAccess) {
                    return (.rejected(status: answer.status, message: refusal), nil, nil, nil)
                }
                return (.refreshed, newAccess, newRefresh, lifetime(answer))
            }
            if answer.status == 401, faults.contains(.recursiveRefresh), depth < 20 {
                // The bug: the refresh call's own 401 goes back into the refresh logic.
                return await performRefresh(access: access, refresh: refresh, call: call, served: served, depth: depth + 1)
            }
            if answer.status >= 500 || answer.status == 429 {
                return (.unavailable(status: answer.status, message: "refresh endpoint failed"), nil, nil, nil)
            }
            return (.rejected(status: answer.status, message: "refresh refused: \(answer.body.prefix(200))"), nil, nil, nil)
        } catch {
            return (.unavailable(status: nil, message: "refresh request failed: \(error)"), nil, nil, nil)
        }
    }
}

/// The answer a refresh on resources produced, for the call that made it.
final class AnswerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Answer?
    var answer: Answer? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
