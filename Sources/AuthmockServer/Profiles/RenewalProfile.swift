import DriverProtocol
import AuthmockCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Refresh at `POST /auth/refresh` with the old access token as Bearer and
/// both tokens in the body; failure is a 401, like an expired access token,
/// so a client that refreshes on any 401 recurses here.
public struct RenewalProfile: PlainErrorProfile {
    public let name = ProfileName.renewal.rawValue
    public let summary = "POST /auth/refresh with Bearer <old access token> and {accessToken, refreshToken}; failure is 401"
    let failureStatus: Int

    public func addRoutes(to router: Router<AuthmockRequestContext>, mock: Authmock) {
        addLogin(to: router, mock: mock)
        router.post("/auth/refresh") { request, context in
            guard case .bearer(let presented) = PresentedCredential(request.headers), !presented.isEmpty else {
                return refreshFailed(.missingAuthorization, context: context)
            }
            let fields: [String: String]
            switch try await BackendDialect.fields(request, names: ["accessToken", "refreshToken"], limit: mock.options.maxBodyBytes) {
            case .failure(let problem): return bodyProblem(problem, context: context)
            case .success(let parsed): fields = parsed
            }
            guard presented == fields["accessToken"] else {
                return refreshFailed(.accessMismatch, detail: "the Bearer token and accessToken differ", context: context)
            }
            switch try await BackendDialect.refreshPair(access: presented, refresh: fields["refreshToken"]!, mock: mock) {
            case .success(let issued):
                context.notes.issued = issued
                // With rotation off the answer has no refreshToken: the client keeps its own.
                return JSONResponse.encode(Renewed(accessToken: issued.accessToken, refreshToken: issued.refreshToken))
            case .failure(let failure):
                let (error, detail) = BackendDialect.error(
                    for: failure, accessMismatch: RenewalError.accessMismatch, expired: .refreshExpired, reused: .refreshReused,
                    unknown: .refreshUnknown, revoked: .refreshRevoked)
                return refreshFailed(error, detail: detail, context: context)
            }
        }
    }

    struct Renewed: Encodable {
        var accessToken: String
        var refreshToken: String?
    }

    private func refreshFailed(_ error: RenewalError, detail: String? = nil, context: AuthmockRequestContext) -> Response {
        var response = fail(error, detail: detail, context: context)
        response.status = .init(code: failureStatus)
        return response
    }

    public func classify(method: HTTPRequest.Method, path: String, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        BackendDialect.classify(path: path, body: body, refreshPath: "/auth/refresh")
    }

    public func resourceRefusal(_ refusal: ResourceRefusal, context: AuthmockRequestContext) -> Response {
        plainRefusal(refusal, context: context)
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        BackendDialect.loginHints(baseURL: baseURL, directory: directory) + [
            "Refresh:",
            "  curl -s -H \"Authorization: Bearer $ACCESS_TOKEN\" -H 'Content-Type: application/json' -d \"{\\\"accessToken\\\":\\\"$ACCESS_TOKEN\\\",\\\"refreshToken\\\":\\\"$REFRESH_TOKEN\\\"}\" \(baseURL)/auth/refresh",
        ]
    }
}
