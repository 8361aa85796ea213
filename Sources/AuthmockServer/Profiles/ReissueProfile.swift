import AuthmockCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Refresh at `POST /auth/reissue` with both tokens; a dead refresh token
/// answers 406, which the apps built on such backends treat as "log out".
public struct ReissueProfile: PlainErrorProfile {
    public let name = "reissue"
    public let summary = "POST /auth/reissue {accessToken, refreshToken}; a dead refresh token answers 406"
    let failureStatus: Int

    public func addRoutes(to router: Router<AuthmockRequestContext>, mock: Authmock) {
        addLogin(to: router, mock: mock)
        router.post("/auth/reissue") { request, context in
            let fields: [String: String]
            switch try await BackendDialect.fields(request, names: ["accessToken", "refreshToken"], limit: mock.options.maxBodyBytes) {
            case .failure(let problem): return bodyProblem(problem, context: context)
            case .success(let parsed): fields = parsed
            }
            // The access token may be expired, but it must be ours and of the same login.
            guard let claims = await mock.authority.signedClaims(fields["accessToken"]!) else {
                return refreshFailed(.accessMismatch, detail: "accessToken is not signed by this server", context: context)
            }
            guard let info = mock.authority.inspectRefreshToken(fields["refreshToken"]!) else {
                return refreshFailed(.refreshUnknown, context: context)
            }
            guard info.familyID == claims.sid else { return refreshFailed(.accessMismatch, context: context) }
            switch try await mock.authority.refresh(fields["refreshToken"]!, clientID: nil) {
            case .success(let issued):
                context.notes.issued = issued
                return JSONResponse.encode(BackendDialect.TokenPair(issued))
            case .failure(.expired): return refreshFailed(.refreshExpired, context: context)
            case .failure(.reused): return refreshFailed(.refreshReused, context: context)
            case .failure(.unknown): return refreshFailed(.refreshUnknown, context: context)
            case .failure(.revoked), .failure(.clientMismatch): return refreshFailed(.refreshRevoked, context: context)
            }
        }
    }

    private func refreshFailed(_ error: ReissueError, detail: String? = nil, context: AuthmockRequestContext) -> Response {
        var response = fail(error, detail: detail, context: context)
        response.status = .init(code: failureStatus)
        return response
    }

    public func classify(method: HTTPRequest.Method, path: String, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        BackendDialect.classify(path: path, body: body, refreshPath: "/auth/reissue")
    }

    public func resourceRefusal(_ refusal: ResourceRefusal, context: AuthmockRequestContext) -> Response {
        plainRefusal(refusal, context: context)
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        BackendDialect.loginHints(baseURL: baseURL, directory: directory) + [
            "Refresh (406 means sign in again):",
            "  curl -s -H 'Content-Type: application/json' -d \"{\\\"accessToken\\\":\\\"$ACCESS_TOKEN\\\",\\\"refreshToken\\\":\\\"$REFRESH_TOKEN\\\"}\" \(baseURL)/auth/reissue",
        ]
    }
}
