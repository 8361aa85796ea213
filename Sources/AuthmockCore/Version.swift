public enum AuthmockVersion {
    public static let current = "0.1.0"
}
