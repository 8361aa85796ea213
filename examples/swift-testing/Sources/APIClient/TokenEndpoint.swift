import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The OAuth 2.0 token endpoint (RFC 6749): the password grant to sign in,
/// the refresh grant to renew, client credentials in Basic auth.
struct TokenEndpoint: Sendable {
    let url: URL
    let clientID: String
    let clientSecret: String
    let http: HTTP

    enum Answer: Sendable {
        case issued(Credentials)
        /// 400 or 401 (`invalid_grant`, `invalid_client`...): this grant will never work.
        case refused(status: Int, body: String)
        /// Any other status (503, 429, a 500): the server cannot answer now.
        case unavailable(status: Int)
    }

    func signIn(username: String, password: String) async throws -> Answer {
        try await grant(["grant_type": "password", "username": username, "password": password], keeping: nil)
    }

    func refresh(_ refreshToken: String) async throws -> Answer {
        try await grant(["grant_type": "refresh_token", "refresh_token": refreshToken], keeping: refreshToken)
    }

    /// `keeping`: the refresh token to keep when the answer brings none (RFC 6749 §6).
    private func grant(_ form: [String: String], keeping refreshToken: String?) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Basic " + Data("\(clientID):\(clientSecret)".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var unreserved = CharacterSet.alphanumerics
        unreserved.insert(charactersIn: "-._~")
        let pairs = form.sorted { $0.key < $1.key }.map { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value)"
        }
        request.httpBody = Data(pairs.joined(separator: "&").utf8)
        let sent = Date()
        let (data, response) = try await http.send(request)
        switch response.statusCode {
        case 200:
            guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let access = json["access_token"] as? String else {
                return .unavailable(status: 200)
            }
            let lifetime = (json["expires_in"] as? NSNumber)?.doubleValue ?? 3600
            return .issued(
                Credentials(
                    accessToken: access, refreshToken: json["refresh_token"] as? String ?? refreshToken,
                    expiresAt: sent.addingTimeInterval(lifetime)))
        case 400, 401:
            return .refused(status: response.statusCode, body: String(decoding: data, as: UTF8.self))
        default:
            return .unavailable(status: response.statusCode)
        }
    }
}
