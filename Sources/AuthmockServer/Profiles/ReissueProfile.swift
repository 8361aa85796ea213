import DriverProtocol
import AuthmockCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Refresh at `POST /auth/reissue` with both tokens; a dead refresh token
/// answers 406, which the apps built on such backends treat as "log out".
public struct ReissueProfile: PlainErrorProfile {
    public let name = ProfileName.reissue.rawValue
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
            switch try await BackendDialect.refreshPair(access: fields["accessToken"]!, refresh: fields["refreshToken"]!, mock: mock) {
            case .success(let issued):
                context.notes.issued = issued
                return JSONResponse.encode(BackendDialect.TokenPair(issued))
            case .failure(let failure):
                return refreshFailed(failure, context: context)
            }
        }
    }

    private func refreshFailed(_ failure: BackendDialect.PairedRefreshFailure, context: AuthmockRequestContext) -> Response {
        let (error, detail) = BackendDialect.error(
            for: failure, accessMismatch: ReissueError.accessMismatch, expired: .refreshExpired, reused: .refreshReused,
            unknown: .refreshUnknown, revoked: .refreshRevoked)
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
