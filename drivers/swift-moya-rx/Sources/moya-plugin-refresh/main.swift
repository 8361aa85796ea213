// Recipe 1: a Moya plugin, as answers to "how do I refresh the token in Moya"
// write it: prepare() adds the current token to every request, didReceive()
// starts a refresh when a response is 401. A plugin sees the response but
// cannot send the request again, so the 401 goes to the app; the next call
// carries the new token. No single flight: each 401 starts its own refresh.
import Foundation
import MoyaDriverSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

final class RefreshTokenPlugin: PluginType, @unchecked Sendable {
    let session: MoyaSession
    let disposeBag = DisposeBag()

    init(session: MoyaSession) { self.session = session }

    func prepare(_ request: URLRequest, target: any TargetType) -> URLRequest {
        var request = request
        request.setValue("Bearer \(session.tokens.accessToken)", forHTTPHeaderField: "Authorization")
        return request
    }

    func didReceive(_ result: Result<Response, MoyaError>, target: any TargetType) {
        guard case .success(let response) = result, response.statusCode == 401 else { return }
        session.refresh().subscribe().disposed(by: disposeBag)
    }
}

await Driver.run(name: "moya-plugin-refresh", version: "15", profiles: ["oauth2"]) { hello in
    let session = MoyaSession(hello: hello)
    let provider = MoyaProvider<APICall>(session: alamofireSession(), plugins: [RefreshTokenPlugin(session: session)])
    return MoyaDriver(session: session) { provider.rx.request($0) }
}
