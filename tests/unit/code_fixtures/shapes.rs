// A fixture for tests/unit/test_code_grammars.py: every kind Rust has.
pub const MAX: usize = 10;
static GREETING: &str = "hello";

pub type Result<T> = std::result::Result<T, Error>;

pub struct Point<T> {
    x: T,
}

pub struct Unit;

pub enum Shape {
    Circle(f64),
    Square { side: f64 },
}

pub trait Area {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        String::new()
    }
}

impl<T> Point<T> {
    pub const ORIGIN: usize = 0;

    pub fn new(x: T) -> Self {
        const LOCAL: u8 = 1;
        Point { x }
    }
}

impl Area for Shape {
    fn area(&self) -> f64 {
        0.0
    }
}

pub mod geometry {
    pub fn distance() -> f64 {
        0.0
    }
}

pub fn free(a: i32) -> i32 {
    a
}
