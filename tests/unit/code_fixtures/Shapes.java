// A fixture for tests/unit/test_code_grammars.py: every kind Java has.
package shapes;

@SuppressWarnings("unused")
public class Shapes<T> extends Base implements Shape {
    public static final int MAX = 10, MIN = 0;
    private final int notConstant = 1;
    static int notFinal;

    public Shapes() {}

    @Override
    public double area() {
        return 0;
    }

    static class Inner {
        void deep() {}
    }

    enum Color {
        RED;

        void paint() {}
    }
}

interface Shape {
    int SIDES = 4;

    double area();
}

record Point(int x, int y) {}

@interface Tag {
    String value();
}
