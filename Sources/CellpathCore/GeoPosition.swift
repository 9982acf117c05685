/// Where a check ran, in WGS 84 decimal degrees (`--position LAT,LON`).
public struct GeoPosition: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double

    /// A position within the globe's ranges (latitude −90…90, longitude −180…180); nil outside.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, (-90 ... 90).contains(latitude),
            (-180 ... 180).contains(longitude)
        else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Reads `LAT,LON` in decimal degrees (`51.5072,-0.1276`): two plain decimal numbers (a sign,
    /// digits, at most one point), a space allowed after the comma; nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Self.degrees(parts[0]),
            let longitude = Self.degrees(parts[1].drop { $0 == " " })
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }

    /// A plain decimal number: `Double(_:)` alone would take `inf`, `nan`, exponents and hex.
    private static func degrees(_ text: Substring) -> Double? {
        let digits = text.first.map { "+-".contains($0) } == true ? text.dropFirst() : text
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            digits.filter({ $0 == "." }).count <= 1, digits.contains(where: \.isNumber)
        else { return nil }
        return Double(text)
    }
}
